"""Checks, without a container engine, that the Docker build context holds what the root
manifest declares: every file of every target path (and Package.swift itself) must be copied by
the build stage's COPY lines to the same path under its WORKDIR, and not be left out of the
context by .dockerignore. Prints what is missing and exits 1; exits 0 when nothing is.

usage: python3 scripts/test/docker_context.py [REPOSITORY]   (default: the one this file is in)

The manifest is read with `swift package dump-package` (scratch path in a temporary directory,
so a build holding the repository's .build lock does not block it). The files are git's when the
repository is a git work tree (generated, ignored files such as revision.h are made inside the
image), else every file on disk.
"""
import json
import os
import posixpath
import re
import subprocess
import sys
import tempfile


def manifest_paths(root):
    """Package.swift and every target's directory, relative to the root."""
    with tempfile.TemporaryDirectory() as scratch:
        dump = subprocess.run(["swift", "package", "--package-path", root, "--scratch-path", scratch, "dump-package"],
                              check=True, capture_output=True, text=True).stdout
    paths = ["Package.swift"]
    for target in json.loads(dump)["targets"]:
        default = "Tests" if target["type"] == "test" else "Sources"
        paths.append(posixpath.normpath(target.get("path") or f"{default}/{target['name']}"))
    return paths


def repository_files(root):
    try:
        listed = subprocess.run(["git", "-C", root, "ls-files", "-z"], check=True, capture_output=True).stdout
        return [name for name in listed.decode().split("\0") if name and os.path.exists(os.path.join(root, name))]
    except (OSError, subprocess.CalledProcessError):
        found = []
        for directory, _, names in os.walk(root):
            found += [os.path.relpath(os.path.join(directory, name), root) for name in names]
        return found


def ignore_rules(root):
    """(negated, regex) per .dockerignore line, in order; the last rule that matches wins."""
    path = os.path.join(root, ".dockerignore")
    rules = []
    if not os.path.exists(path):
        return rules
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pattern = posixpath.normpath(line.lstrip("!").strip().lstrip("/"))
        regex, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**", i):
                regex += ".*"
                i += 2
                if pattern.startswith("/", i):
                    regex, i = regex + "(?:/)?", i + 1
            elif pattern[i] == "*":
                regex, i = regex + "[^/]*", i + 1
            elif pattern[i] == "?":
                regex, i = regex + "[^/]", i + 1
            else:
                regex, i = regex + re.escape(pattern[i]), i + 1
        # A pattern that matches a directory leaves out everything under it.
        rules.append((negated, re.compile(f"^{regex}(?:/.*)?$")))
    return rules


def ignored(path, rules):
    result = False
    for negated, regex in rules:
        if regex.match(path):
            result = not negated
    return result


def build_stage_copies(root):
    """(source, destination) pairs of the COPY/ADD lines, without --from, of the stage that runs
    `swift build`, destinations relative to its WORKDIR."""
    text = open(os.path.join(root, "Dockerfile"), encoding="utf-8").read().replace("\\\n", " ")
    stages, current = [], None
    for line in text.splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        instruction = words[0].upper()
        if instruction == "FROM":
            current = {"workdir": "/", "copies": [], "builds": False}
            stages.append(current)
        elif current is None:
            continue
        elif instruction == "WORKDIR":
            current["workdir"] = posixpath.join(current["workdir"], words[1])
        elif instruction == "RUN" and "swift build" in line:
            current["builds"] = True
        elif instruction in ("COPY", "ADD"):
            arguments = [word for word in words[1:] if not word.startswith("--")]
            if any(word.startswith("--from") for word in words[1:]) or len(arguments) < 2:
                continue
            *sources, destination = arguments
            many = len(sources) > 1 or destination.endswith("/")
            for source in sources:
                source = posixpath.normpath(source)
                target = posixpath.join(destination, posixpath.basename(source)) if many else destination
                target = posixpath.normpath(posixpath.join(current["workdir"], target))
                current["copies"].append((source, posixpath.relpath(target, current["workdir"])))
    builders = [stage for stage in stages if stage["builds"]]
    if not builders:
        sys.exit("docker_context: no stage of the Dockerfile runs `swift build`")
    return builders[0]["copies"]


def copied_to(path, copies):
    """Where the build stage puts the repository file `path`, or None."""
    for source, destination in copies:
        if source == "." or path == source or path.startswith(source + "/"):
            rest = path if source == "." else path[len(source):].lstrip("/")
            return posixpath.normpath(posixpath.join(destination, rest)) if rest else destination
    return None


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    files = repository_files(root)
    rules = ignore_rules(root)
    copies = build_stage_copies(root)
    problems = []
    for declared in manifest_paths(root):
        inside = [name for name in files if name == declared or name.startswith(declared + "/")]
        if not inside:
            problems.append(f"{declared}: declared by Package.swift, but no such file in the repository")
        for name in inside:
            if ignored(name, rules):
                problems.append(f"{name}: under {declared} (Package.swift), but .dockerignore leaves it out")
            elif copied_to(name, copies) != name:
                problems.append(f"{name}: under {declared} (Package.swift), but no COPY of the build stage puts it there")
    for problem in problems:
        print(problem)
    if problems:
        print(f"docker_context: {len(problems)} file(s) the manifest needs are missing from the image's build")
        return 1
    print(f"docker_context: the build context holds every path Package.swift declares ({len(copies)} COPY lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
