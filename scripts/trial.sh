#!/usr/bin/env bash
# make trial: httpdnsd against DNS servers of its own, on loopback only, in a temporary directory.
#
# Starts unbound serving the zone example.test (scripts/trial/example.test.zone), dnss as its
# RFC 8484 front, and httpdnsd with those two as upstream and fallback and a freshly generated
# admin token; prints the variables the documentation's examples use ($HTTPDNS, $ADMIN_TOKEN,
# $TRIAL_UPSTREAM),
# then waits. Ctrl-C (or SIGTERM) stops all three and removes the directory.
#
# Every server binds 127.0.0.1; nothing is asked of any other address. The ports can be moved:
#   TRIAL_PORT (httpdnsd, 8080), TRIAL_DNS_PORT (unbound, 5353), TRIAL_DOH_PORT (dnss, 8053).
# HTTPDNSD_BIN names the binary (make trial passes the one it built); ADMIN_TOKEN, when set, is
# used instead of a generated one.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
zone="$here/trial/example.test.zone"
port="${TRIAL_PORT:-8080}"
dns_port="${TRIAL_DNS_PORT:-5353}"
doh_port="${TRIAL_DOH_PORT:-8053}"
bin="${HTTPDNSD_BIN:-}"

fail() { echo "trial: $*" >&2; exit 1; }
for value in "$port" "$dns_port" "$doh_port"; do
  [[ "$value" =~ ^[0-9]+$ ]] && ((value > 0 && value < 65536)) || fail "'$value' is not a port (1-65535)"
done
[[ -n "$bin" && -x "$bin" ]] || fail "HTTPDNSD_BIN must name the httpdnsd binary (make trial sets it)"
for tool in unbound dnss; do
  command -v "$tool" >/dev/null || fail "$tool is missing: apt-get install unbound dnss (make deps)"
done
token="${ADMIN_TOKEN:-$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')}"

dir="$(mktemp -d "${TMPDIR:-/tmp}/httpdnsd-trial.XXXXXX")"
pids=()
stop() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap stop EXIT
trap 'exit 0' INT TERM

cp "$zone" "$dir/example.test.zone"
cat >"$dir/unbound.conf" <<CONF
server:
  interface: 127.0.0.1
  port: $dns_port
  do-ip6: no
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "$dir"
  pidfile: "$dir/unbound.pid"
  use-syslog: no
  logfile: ""
  num-threads: 1
  # Addresses in zone order, so that answers (and the documentation's examples) do not rotate.
  rrset-roundrobin: no
  access-control: 127.0.0.0/8 allow
  module-config: "iterator"
  local-zone: "test." nodefault
  # Never recurse to the internet: everything outside example.test is REFUSED.
  local-zone: "." refuse
  local-zone: "example.test." transparent
auth-zone:
  name: "example.test."
  zonefile: "$dir/example.test.zone"
  for-downstream: yes
  for-upstream: yes
  fallback-enabled: no
remote-control:
  control-enable: no
CONF

# Polls `check` until it succeeds, for at most 30 s (a loaded machine), while process `pid` runs.
wait_for() {
  local what="$1" pid="$2" check="$3" log="$4"
  for _ in $(seq 300); do
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; fail "$what exited"; }
    if eval "$check" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  cat "$log" >&2
  fail "$what did not answer within 30 s"
}

unbound -d -c "$dir/unbound.conf" >"$dir/unbound.log" 2>&1 &
pids+=($!)
# www.example.test A, id 0, as RFC 8484's base64url: the same question dnss answers below.
query="AAABAAABAAAAAAAAA3d3dwdleGFtcGxlBHRlc3QAAAEAAQ"
dnss -enable_https_to_dns -dns_upstream "127.0.0.1:$dns_port" -fallback_upstream "127.0.0.1:$dns_port" \
  -https_server_addr "127.0.0.1:$doh_port" -insecure_http_server >"$dir/dnss.log" 2>&1 &
pids+=($!)
wait_for dnss "${pids[1]}" "curl -sf -o /dev/null 'http://127.0.0.1:$doh_port/dns-query?dns=$query'" "$dir/dnss.log"

HTTPDNS_ADMIN_TOKEN="$token" "$bin" --listen "127.0.0.1:$port" --db "$dir/httpdnsd.sqlite" \
  --upstreams "doh:http://127.0.0.1:$doh_port/dns-query" --localdns-servers "127.0.0.1:$dns_port" --shutdown-drain 0 \
  2> >(tee "$dir/httpdnsd.log" >&2) &
pids+=($!)
wait_for httpdnsd "${pids[2]}" "curl -sf 'http://127.0.0.1:$port/readyz'" "$dir/httpdnsd.log"

cat <<TEXT

httpdnsd answers on http://127.0.0.1:$port (upstream dnss on 127.0.0.1:$doh_port, fallback unbound on
127.0.0.1:$dns_port, zone example.test, files in $dir). In another shell:

export HTTPDNS=http://127.0.0.1:$port ADMIN_TOKEN=$token TRIAL_UPSTREAM=doh:http://127.0.0.1:$doh_port/dns-query
curl -s "\$HTTPDNS/v1/default/resolve?host=www.example.test"

Ctrl-C stops everything and removes $dir.
TEXT
wait "${pids[2]}"
