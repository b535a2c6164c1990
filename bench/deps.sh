#!/usr/bin/env bash
# Installs what `make bench` needs and is missing: the project's packages (scripts/install-deps.sh:
# libmicrohttpd-dev, unbound, dnss, python3, ...) plus the load generators and the C compiler
# of the baseline. Idempotent: apt runs only when something is absent.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/install-deps.sh

PACKAGES=(wrk dnsperf gcc libc6-dev pkg-config)
missing=()
for pkg in "${PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "bench/deps: installing missing packages: ${missing[*]}"
  if [[ "$(id -u)" -eq 0 ]]; then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "bench/deps: not root and sudo is not available; install as root: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "bench/deps: wrk, dnsperf and gcc present"
fi
