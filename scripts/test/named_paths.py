"""Every repository path that the deployment files, scripts and the build name must exist.

usage: python3 scripts/test/named_paths.py [REPOSITORY]

Reads the tracked files of Dockerfile, Makefile, deploy/, scripts/, bench/deps.sh and fuzz/run.sh
for words that start with a top-level directory of the repository (`scripts/...`,
`deploy/...`, `docs/...`, ...) and checks each against the work tree, relative to the
repository or to the naming file's directory. Paths git ignores (build outputs such as
revision.h or fuzz/out) are written by the tools, not shipped: they are skipped. Prints each
missing path with the file that names it; exits 1 when there is one.
"""
import os
import re
import subprocess
import sys

NAMING = ["Dockerfile", "Makefile", "deploy", "scripts", "bench/deps.sh", "fuzz/run.sh"]
PATH = re.compile(r"(?<![\w./+-])((?:scripts|deploy|docs|bench|fuzz|Sources|Tests)/[A-Za-z0-9_./+-]*[A-Za-z0-9_+])")


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", ".."))
    files = subprocess.run(["git", "-C", root, "ls-files", "-z", *NAMING], check=True, capture_output=True).stdout
    missing = []
    for name in filter(None, files.decode().split("\0")):
        try:
            text = open(os.path.join(root, name), encoding="utf-8").read()
        except (OSError, UnicodeDecodeError):
            continue
        for match in PATH.finditer(text):
            path = match.group(1)
            here = os.path.join(root, os.path.dirname(name), path)
            if os.path.exists(os.path.join(root, path)) or os.path.exists(here):
                continue
            # A directory pattern (`/fuzz/out/`) matches the name only with its slash.
            if any(subprocess.run(["git", "-C", root, "check-ignore", "-q", candidate]).returncode == 0
                   for candidate in (path, path + "/")):
                continue
            missing.append(f"{name}: names {path}, which does not exist")
    print("\n".join(missing) or "named_paths: every path named exists")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
