#!/usr/bin/env bash
# End-to-end check of the container image, from any clone, on a machine that need not reach the
# internet. Run by hand (it is NOT part of `make test`):
#
#   scripts/container-check.sh                                   # docker or podman, bases pulled
#   STANDINS=/path/to/container-standins scripts/container-check.sh   # as root, offline bases
#
# 1. with STANDINS set, runs that script first: it builds local stand-ins for swift:6.3-bookworm
#    and debian:bookworm-slim and prints the CONTAINERS_CONF podman should use (podman only;
#    3-5 minutes the first time, then instant); without it the engine pulls the base images,
# 2. builds the image from the Dockerfile (a release build: several minutes),
# 3. starts unbound (a tiny static zone example.test) and dnss (RFC 8484 front) on loopback,
# 4. runs the image with --network host, upstream = that dnss, fallback = that unbound
#    (nothing the service does leaves 127.0.0.0/8),
# 5. checks /healthz, /readyz, the image's health-check command, a resolve of
#    www.example.test, a cache hit (the public /metrics total, which has no account label), a
#    graceful stop (exit 0 on SIGTERM) and a warm restart (the cache comes back from the volume
#    with the upstream gone; the hit shows per account on the operations listener),
# 6. prints PASS or FAIL and removes everything it started on every path.
#
# Environment: ENGINE (docker or podman; default: podman when installed, else docker),
# STANDINS (the stand-in script, see 1; nothing outside the repository is used without it),
# IMAGE (default httpdnsd:check), KEEP_IMAGE=1 keeps the built image, SKIP_BUILD=1 reuses an
# existing $IMAGE, NO_CACHE=1 builds every layer again (apt-get and the release build included).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
standins=${STANDINS:-}
if [[ -n ${ENGINE:-} ]]; then
  engine=$ENGINE
elif command -v podman >/dev/null || [[ -n $standins ]]; then
  engine=podman
else
  engine=docker
fi
image=${IMAGE:-httpdnsd:check}
name=httpdnsd-check-$$
warm=httpdnsd-check-warm-$$
volume=httpdnsd-check-$$
work=$(mktemp -d /tmp/httpdnsd-container-check.XXXXXX)
pids=()
failed=0
started=0

log() { printf '[container-check] %s\n' "$*"; }
fail() { log "FAIL: $*"; failed=1; }

cleanup() {
  local rc=$?
  set +e
  if ((started)); then
    for c in "$name" "$warm"; do
      "$engine" container inspect "$c" >/dev/null 2>&1 || continue
      if ((rc != 0 || failed != 0)); then
        log "log of $c (last 30 lines):"
        "$engine" logs "$c" 2>&1 | tail -30 | sed 's/^/  | /'
      fi
      "$engine" rm -f "$c" >/dev/null 2>&1
    done
    "$engine" volume rm -f "$volume" >/dev/null 2>&1
    [[ ${KEEP_IMAGE:-0} == 1 || ${SKIP_BUILD:-0} == 1 ]] || "$engine" rmi -f "$image" >/dev/null 2>&1
  fi
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  rm -rf "$work"
  if ((rc != 0 || failed != 0)); then echo "FAIL"; exit 1; fi
  echo "PASS"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

case $engine in
  docker) build_flags=(); run_flags=() ;;
  # chroot isolation and runc: what podman needs where it runs nested without systemd or cgroups.
  podman) build_flags=(--format docker --isolation chroot); run_flags=(--runtime runc --ulimit host --http-proxy=false) ;;
  *) log "ENGINE must be docker or podman, not $engine"; failed=1; exit 1 ;;
esac
if [[ -n $standins ]]; then
  [[ $engine == podman ]] || { log "STANDINS prepares podman's images; ENGINE=$engine cannot use them"; failed=1; exit 1; }
  [[ -x $standins ]] || { log "STANDINS=$standins is not an executable file"; failed=1; exit 1; }
  [[ $(id -u) == 0 ]] || { log "STANDINS needs root (it builds root file systems with debootstrap)"; failed=1; exit 1; }
fi
for tool in unbound dnss curl python3; do
  command -v "$tool" >/dev/null || { log "missing $tool (apt-get install -y unbound dnss curl python3)"; failed=1; exit 1; }
done

# Free loopback TCP ports (dnss and httpdnsd) and a UDP+TCP one (unbound).
read -r ub_port dnss_port http_port ops_port < <(python3 - <<'PY'
import socket
socks, ports = [], []
for _ in range(4):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s); ports.append(s.getsockname()[1])
print(*ports)
PY
)

# ---- 1. stand-in base images ----------------------------------------------------------------
if [[ -n $standins ]]; then
  log "preparing stand-in base images ($standins)"
  "$standins" >"$work/standins.out" 2>&1 || { cat "$work/standins.out"; fail "$standins failed"; exit 1; }
  conf=$(sed -n 's/^ *export CONTAINERS_CONF=//p' "$work/standins.out" | tail -1)
  [[ -n $conf ]] || { cat "$work/standins.out"; fail "$standins printed no CONTAINERS_CONF"; exit 1; }
  export CONTAINERS_CONF=$conf
  sed 's/^/  | /' "$work/standins.out"
else
  log "no STANDINS: $engine uses (or pulls) the Dockerfile's base images"
fi
command -v "$engine" >/dev/null || { fail "$engine is not installed (ENGINE=docker or podman)"; exit 1; }
started=1

# ---- 2. image ---------------------------------------------------------------------------------
if [[ ${SKIP_BUILD:-0} == 1 ]]; then
  log "SKIP_BUILD=1: using existing $image"
else
  log "building $image (release build inside the container; takes a while)"
  start=$SECONDS
  if ! "$engine" build "${build_flags[@]}" --network host ${NO_CACHE:+--no-cache} --build-arg HTTPDNS_REVISION="$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" -t "$image" "$repo" >"$work/build.log" 2>&1; then
    tail -40 "$work/build.log" | sed 's/^/  | /'
    fail "$engine build failed"; exit 1
  fi
  log "image built in $((SECONDS - start)) s: $("$engine" image inspect --format '{{.Size}}' "$image" | awk '{printf "%.1f MB", $1/1e6}')"
fi
ldd_out=$("$engine" run "${run_flags[@]}" --rm --network none --entrypoint ldd "$image" /usr/local/bin/httpdnsd 2>&1 || true)
if grep -q 'not found' <<<"$ldd_out"; then
  grep 'not found' <<<"$ldd_out" | sed 's/^/  | /'
  fail "a shared library is missing in the runtime image"
else
  log "ok   ldd: $(grep -c '=>' <<<"$ldd_out") shared libraries, none missing" \
    "($(awk '/=>/{print $1}' <<<"$ldd_out" | grep -E '^lib(microhttpd|curl|cares|sqlite3|ssl|crypto|stdc)' | tr '\n' ' '))"
fi

# ---- 3. loopback DNS servers ------------------------------------------------------------------
cat >"$work/unbound.conf" <<EOC
server:
  interface: 127.0.0.1
  port: $ub_port
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "$work"
  pidfile: "$work/unbound.pid"
  use-syslog: no
  logfile: ""
  access-control: 127.0.0.0/8 allow
  do-not-query-localhost: no
  module-config: "iterator"
  local-zone: "." refuse
  local-zone: "example.test." static
  local-data: "www.example.test. 300 IN A 127.0.0.11"
  local-data: "www.example.test. 300 IN A 127.0.0.12"
  local-data: "www.example.test. 300 IN AAAA ::1"
  local-data: "api.example.test. 60 IN CNAME www.example.test."
remote-control:
  control-enable: no
EOC
unbound -c "$work/unbound.conf" >"$work/unbound.log" 2>&1 &
pids+=($!)
dnss -enable_https_to_dns -dns_upstream "127.0.0.1:$ub_port" \
  -https_server_addr "127.0.0.1:$dnss_port" -insecure_http_server >"$work/dnss.log" 2>&1 &
pids+=($!)
# www.example.test A, ID 0, RFC 8484 base64url without padding.
query=AAABAAABAAAAAAAAA3d3dwdleGFtcGxlBHRlc3QAAAEAAQ
for _ in $(seq 50); do
  if curl -fsS --noproxy '*' -o /dev/null "http://127.0.0.1:$dnss_port/dns-query?dns=$query" 2>/dev/null; then break; fi
  sleep 0.2
done
curl -fsS --noproxy '*' -o /dev/null "http://127.0.0.1:$dnss_port/dns-query?dns=$query" \
  || { fail "unbound/dnss did not come up (unbound :$ub_port, dnss :$dnss_port)"; exit 1; }
log "unbound on 127.0.0.1:$ub_port, dnss on 127.0.0.1:$dnss_port"

# ---- 4. the container -------------------------------------------------------------------------
base="http://127.0.0.1:$http_port"
run_container() { # $1 container name, $2 upstreams, then more `run` arguments
  # --no-healthcheck: podman runs HEALTHCHECK through systemd timers, often absent; the check
  # runs the health-check command itself with `exec` instead.
  local container=$1 upstreams=$2
  shift 2
  "$engine" run "${run_flags[@]}" -d --name "$container" --network host --no-healthcheck \
    -v "$volume:/var/lib/httpdnsd" \
    -e HTTPDNS_LISTEN="127.0.0.1:$http_port" \
    -e HTTPDNS_UPSTREAMS="$upstreams" \
    -e HTTPDNS_LOCALDNS_SERVERS="127.0.0.1:$ub_port" \
    "$@" "$image" >/dev/null
}
wait_ready() { # $1 container name
  for _ in $(seq 100); do
    if curl -fsS --noproxy '*' -o /dev/null "$base/readyz" 2>/dev/null; then return 0; fi
    [[ $("$engine" inspect --format '{{.State.Running}}' "$1") == true ]] || return 1
    sleep 0.2
  done
  return 1
}
get() { curl -sS --noproxy '*' -m 10 "$@" || true; }

"$engine" volume create "$volume" >/dev/null
run_container "$name" "doh:http://127.0.0.1:$dnss_port/dns-query"
wait_ready "$name" || { fail "httpdnsd did not become ready on $base"; exit 1; }
log "httpdnsd ready on $base (user $("$engine" exec "$name" id -un))"

body=$(get "$base/healthz")
[[ $body == *'"ok"'* ]] && log "ok   GET /healthz -> $body" || fail "GET /healthz -> $body"
body=$(get "$base/readyz")
[[ $body == *'"ready"'* ]] && log "ok   GET /readyz -> $body" || fail "GET /readyz -> $body"
if "$engine" exec "$name" /usr/local/bin/httpdnsd-healthcheck; then log "ok   httpdnsd-healthcheck exits 0"; else fail "httpdnsd-healthcheck failed"; fi
[[ $("$engine" exec "$name" id -u) != 0 ]] && log "ok   runs as non-root" || fail "runs as root"
healthcheck=$("$engine" image inspect --format '{{json .Config.Healthcheck}}' "$image" 2>/dev/null || true)
[[ $healthcheck == *httpdnsd-healthcheck* ]] && log "ok   the image declares HEALTHCHECK httpdnsd-healthcheck" \
  || fail "the image has no HEALTHCHECK ($healthcheck)"

body=$(get "$base/v1/default/resolve?host=www.example.test&type=A")
if [[ $body == *'"127.0.0.11"'* && $body == *'"127.0.0.12"'* && $body == *'"source":"upstream"'* ]]; then
  log "ok   resolve www.example.test -> $body"
else
  fail "resolve www.example.test -> $body"
fi
body=$(get "$base/v1/default/resolve?host=www.example.test&type=A")
[[ $body == *'"source":"cache"'* ]] && log "ok   second resolve is a cache hit -> $body" || fail "second resolve -> $body"
body=$(get "$base/v1/default/resolve?host=www.example.test&type=A&short=1")
[[ $body == '["127.0.0.11","127.0.0.12"]' || $body == '["127.0.0.12","127.0.0.11"]' ]] \
  && log "ok   short=1 -> $body" || fail "short=1 -> $body"
status=$(get -o /dev/null -w '%{http_code}' "$base/v1/default/resolve?host=bad..example.test")
[[ $status == 400 ]] && log "ok   invalid host -> 400" || fail "invalid host -> $status"
# The public listener shows totals only: an account label would list the tenants to anyone.
metrics=$(get "$base/metrics")
grep -q '^httpdns_cache_hits_total [1-9]' <<<"$metrics" \
  && log "ok   public /metrics counts the cache hit" || fail "public /metrics has no cache hit: $(grep -m3 httpdns_cache <<<"$metrics")"
grep -q 'account=' <<<"$metrics" && fail "public /metrics shows an account label" \
  || log "ok   public /metrics has no account label"

# ---- 5. graceful stop and warm restart --------------------------------------------------------
"$engine" stop -t 20 "$name" >/dev/null
code=$("$engine" inspect --format '{{.State.ExitCode}}' "$name")
[[ $code == 0 ]] && log "ok   SIGTERM -> exit code 0" || fail "SIGTERM -> exit code $code"
log "log of the first run:"
"$engine" logs "$name" 2>&1 | tail -15 | sed 's/^/  | /'
grep -q 'stopped cleanly' < <("$engine" logs "$name" 2>&1) && log "ok   the log says it stopped cleanly" \
  || fail "no 'stopped cleanly' in the log"
"$engine" rm -f "$name" >/dev/null

# The upstream now points at a closed port: the answer can only come from the persisted cache.
# This run has an operations listener, where /metrics moves and shows per-account series.
ops="http://127.0.0.1:$ops_port"
run_container "$warm" "doh:http://127.0.0.1:9/dns-query" -e HTTPDNS_OPS_LISTEN="127.0.0.1:$ops_port"
wait_ready "$warm" || { fail "restarted httpdnsd did not become ready"; exit 1; }
body=$(get "$base/v1/default/cache?host=www.example.test&type=A")
[[ $body == *'"127.0.0.11"'* ]] && log "ok   warm restart: cache lookup after restart -> $body" \
  || fail "warm restart: cache lookup after restart -> $body"
body=$(get "$base/v1/default/resolve?host=www.example.test&type=A")
[[ $body == *'"source":"cache"'* ]] && log "ok   warm restart: resolve from the persisted cache -> $body" \
  || fail "warm restart: resolve -> $body"
status=$(get -o /dev/null -w '%{http_code}' "$base/metrics")
[[ $status == 404 ]] && log "ok   with an operations listener, public /metrics -> 404" || fail "public /metrics -> $status"
metrics=$(get "$ops/metrics")
grep -q '^httpdns_cache_hits_total{account="default"} [1-9]' <<<"$metrics" \
  && log "ok   ops /metrics counts the hit for account default" \
  || fail "ops /metrics has no hit for account default: $(grep -m3 httpdns_cache_hits <<<"$metrics")"
"$engine" stop -t 20 "$warm" >/dev/null
