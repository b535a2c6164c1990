#!/bin/sh
# Records the revision httpdnsd reports (`--version`, `httpdns_build_info{revision}`) in
# Sources/CBuildRevision/revision.h (ignored by git), which the next build compiles in, and prints it.
#
#   scripts/build-revision.sh            # git's HEAD (12 hex digits, "-dirty" when tracked files differ), else "unknown"
#   scripts/build-revision.sh 1a2b3c4d   # a given revision (the Dockerfile's HTTPDNS_REVISION build argument)
#
# The header is rewritten only when its content changes, and then revision.c is touched: SwiftPM
# learns of a header only through the compiler's dependency file, which does not name a header that
# did not exist at the last build. A plain `swift build` compiles whatever the last run wrote.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd -P)
revision=${1:-}
if [ -z "$revision" ]; then
    revision=unknown
    # Only this tree's own repository: a copy of the sources inside another checkout is "unknown".
    if top=$(git -C "$root" rev-parse --show-toplevel 2>/dev/null) && [ "$(cd "$top" && pwd -P)" = "$root" ] \
        && head=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null); then
        revision=$head
        git -C "$root" diff --quiet HEAD -- 2>/dev/null || revision="$head-dirty"
    fi
fi
case $revision in
    *[!0-9A-Za-z._+-]*)
        echo "build-revision.sh: revision '$revision' refused: letters, digits and . _ + - only" >&2
        exit 2 ;;
esac
[ ${#revision} -le 64 ] || { echo "build-revision.sh: revision longer than 64 characters refused" >&2; exit 2; }

header="$root/Sources/CBuildRevision/revision.h"
text="#define HTTPDNS_REVISION \"$revision\""
if [ "$(cat "$header" 2>/dev/null || true)" != "$text" ]; then
    printf '%s\n' "$text" > "$header.tmp"
    mv "$header.tmp" "$header"
    touch "$root/Sources/CBuildRevision/revision.c"
fi
printf '%s\n' "$revision"
