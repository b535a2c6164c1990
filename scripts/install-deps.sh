#!/usr/bin/env bash
# Installs what httpdnsd needs, only what is missing. Idempotent: runs `apt-get update` and
# `apt-get install` (and pip) only when something is absent.
#
#   scripts/install-deps.sh            to build and run (`make run`): the C libraries' -dev
#                                      packages and pkg-config
#   scripts/install-deps.sh --test     that, plus what the tests start and use (`make test`):
#                                      unbound, dnss, redis-server, haproxy, prometheus, ... and
#                                      the test-only PyPI packages
#
# Extra package names after the options are installed the same way (bench/deps.sh does that).
set -euo pipefail

test_tools=0
if [[ ${1:-} == --test ]]; then
  test_tools=1
  shift
fi

# To build and run: the libraries the binary links against, with their headers.
PACKAGES=(
  libmicrohttpd-dev
  libgnutls28-dev
  libcurl4-openssl-dev
  libc-ares-dev
  libmaxminddb-dev
  libsqlite3-dev
  libssl-dev
  libknot-dev
  libhiredis-dev
  libfstrm-dev
  pkg-config
)
# To test: the servers the integration tests start on loopback and the clients and checkers they run.
TEST_PACKAGES=(
  redis-server
  haproxy
  unbound
  dnss
  python3
  openssl
  curl
  knot-dnsutils
  python3-cryptography
  prometheus
  python3-yaml
  python3-pip
  iproute2
  libmaxmind-db-writer-perl
  systemd
  gcc
  golang-go
  fstrm-bin
  dnstap-ldns
  chromium
  chromium-driver
  python3-selenium
)
((test_tools)) && PACKAGES+=("${TEST_PACKAGES[@]}")
PACKAGES+=("$@")

missing=()
for pkg in "${PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "install-deps: installing missing packages: ${missing[*]}"
  if [[ "$(id -u)" -eq 0 ]]; then
    SUDO=()
  elif command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "install-deps: not root and sudo is not available; install as root: apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  # The tests run their own unbound (and redis) on loopback. Keep the packages from starting the system
  # service, which would fetch the root trust anchor and recurse to the internet: a
  # policy-rc.d that refuses every start, for the time of the install only.
  policy=/usr/sbin/policy-rc.d
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' | "${SUDO[@]}" tee "$policy" >/dev/null
    "${SUDO[@]}" chmod 755 "$policy"
    trap '"${SUDO[@]}" rm -f "$policy"' EXIT
  fi
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all Debian packages present"
fi

# Test-only PyPI packages: clients the integration tests use that nobody here wrote (dnspython's
# RFC 8484 client in scripts/test/doh_client.py). For the python3 on PATH, which the tests run.
# schemathesis checks the service against openapi.yaml (IntegrationTests/ContractTests),
# openapi-spec-validator checks that openapi.yaml is valid OpenAPI (the same suite) and
# kubernetes-validate checks deploy/kubernetes.yaml (IntegrationTests/DeployTests).
PIP_PACKAGES=("dnspython[doh]>=2.4" httpx h2 schemathesis openapi-spec-validator kubernetes-validate)
if ((!test_tools)); then
  :
elif python3 -c 'import dns.query, httpx, h2' 2>/dev/null && command -v schemathesis >/dev/null 2>&1 \
  && command -v openapi-spec-validator >/dev/null 2>&1 && command -v kubernetes-validate >/dev/null 2>&1; then
  echo "install-deps: test-only PyPI packages present"
else
  echo "install-deps: installing test-only PyPI packages: ${PIP_PACKAGES[*]}"
  pip_flags=(--quiet)
  # Debian's own python3 refuses pip installs (PEP 668) unless told; a pyenv or venv python does not.
  if python3 -m pip install --help 2>/dev/null | grep -q -- --break-system-packages; then
    pip_flags+=(--break-system-packages)
  fi
  python3 -m pip install "${pip_flags[@]}" "${PIP_PACKAGES[@]}"
fi

if ! command -v swift >/dev/null 2>&1; then
  if [[ -x /opt/swift/usr/bin/swift ]]; then
    echo "install-deps: swift is not on PATH but /opt/swift/usr/bin/swift exists;" \
         "the Makefile adds /opt/swift/usr/bin to PATH (or: export PATH=/opt/swift/usr/bin:\$PATH)"
  else
    echo "install-deps: no Swift toolchain found. Install Swift 6 (https://www.swift.org/install/linux/)," \
         "e.g. unpack it to /opt/swift so that /opt/swift/usr/bin/swift exists, or put swift on PATH." >&2
    exit 1
  fi
fi

