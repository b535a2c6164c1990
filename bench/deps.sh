#!/usr/bin/env bash
# Installs what `make bench` needs beyond `make test`'s packages: wrk (the load), dnsperf (the
# upstream's own rate) and gcc with the libmicrohttpd headers (the C baseline). Only what is
# missing; the work is scripts/install-deps.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
exec ./scripts/install-deps.sh --test wrk dnsperf gcc libc6-dev
