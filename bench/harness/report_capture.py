"""For the report's unit tests: what a part of the report writes, captured."""


def captured(rows_of, results):
    """Runs `rows_of(add, target, results)` (a part of the targets' table) and returns the lines it
    added, as one text, and the target rows it gave, as (figure, goal, value, ok) tuples."""
    lines, rows = [], []
    rows_of(lines.append, lambda figure, goal, value, ok, shown=None: rows.append((figure, goal, value, ok)), results)
    return "\n".join(lines), rows
