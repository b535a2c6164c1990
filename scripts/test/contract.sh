#!/usr/bin/env bash
# The contract run of `make test` (IntegrationTests/ContractTests): schemathesis (bounded examples,
# every phase including the stateful one, every check including not_a_server_error) against the
# real httpdnsd binary, with the admin token, checking every answer against openapi.yaml.
#
# The upstreams are live: unbound (a static zone: www.example.test and api.example.test answer,
# every other name is NXDOMAIN) behind dnss (RFC 8484), both on loopback, the default account's
# upstream and fallback. A resolution therefore always ends in an answer, and any 5xx is a fault
# of httpdnsd (an upstream's failure is a documented 502/504 that a live upstream never gives).
#
# Generated accounts may name any upstream, the public default ones included, so the whole run
# happens in a new network namespace (unshare --user --net) whose only interface is loopback:
# nothing can leave the machine whatever the generator writes.
#
# The seed is CONTRACT_SEED when set, else the SEED argument, else a new one; it is printed
# first, so a failure can be replayed with CONTRACT_SEED=<seed>. `make test` passes a fixed seed
# (the same cases every run); `make contract` runs many new ones. Exits with schemathesis'
# status; 3 when the namespace cannot be made.
#
# usage: scripts/test/contract.sh /path/to/httpdnsd [max-examples [seed]]
set -euo pipefail

binary=${1:?usage: contract.sh HTTPDNSD_BINARY [MAX_EXAMPLES [SEED]]}
examples=${2:-10}
root=$(cd "$(dirname "$0")/../.." && pwd)
# Chosen once, outside the namespace, and passed on: the re-executed script prints the same one.
export CONTRACT_SEED=${CONTRACT_SEED:-${3:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}}

if [[ -z ${HTTPDNS_CONTRACT_NETNS:-} ]]; then
  if ! unshare --user --map-root-user --net true 2>/dev/null; then
    echo "contract.sh: cannot create a network namespace (unshare --user --net); the run needs one to stay on loopback" >&2
    exit 3
  fi
  exec env HTTPDNS_CONTRACT_NETNS=1 unshare --user --map-root-user --net "$0" "$@"
fi

echo "contract.sh: seed $CONTRACT_SEED (replay with CONTRACT_SEED=$CONTRACT_SEED)"
ip link set lo up
work=$(mktemp -d)
token="contract-admin-token-$$"
# The namespace is new: every port is free.
port=18080 dnss_port=18053 unbound_port=15353
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

cat >"$work/unbound.conf" <<EOC
server:
  interface: 127.0.0.1
  port: $unbound_port
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "$work"
  pidfile: "$work/unbound.pid"
  use-syslog: no
  logfile: ""
  access-control: 127.0.0.0/8 allow
  module-config: "iterator"
  local-zone: "." static
  local-data: "www.example.test. 300 IN A 192.0.2.10"
  local-data: "www.example.test. 300 IN A 192.0.2.11"
  local-data: "www.example.test. 300 IN AAAA 2001:db8::10"
  local-data: "www.example.com. 300 IN A 192.0.2.10"
  local-data: "api.example.test. 60 IN CNAME www.example.test."
remote-control:
  control-enable: no
EOC
unbound -c "$work/unbound.conf" >"$work/unbound.log" 2>&1 &
pids+=($!)
dnss -enable_https_to_dns -dns_upstream "127.0.0.1:$unbound_port" \
  -https_server_addr "127.0.0.1:$dnss_port" -insecure_http_server >"$work/dnss.log" 2>&1 &
pids+=($!)
# www.example.test A through dnss, RFC 8484 base64url without padding.
for _ in $(seq 1 100); do
  if curl -fsS -o /dev/null "http://127.0.0.1:$dnss_port/dns-query?dns=AAABAAABAAAAAAAAA3d3dwdleGFtcGxlBHRlc3QAAAEAAQ" 2>/dev/null; then break; fi
  sleep 0.05
done

"$binary" --listen "127.0.0.1:$port" --db "$work/httpdnsd.sqlite" --admin-token "$token" \
  --upstreams "doh:http://127.0.0.1:$dnss_port/dns-query" --localdns-servers "127.0.0.1:$unbound_port" --shutdown-drain 0 \
  >"$work/httpdnsd.log" 2>&1 &
pid=$!
pids+=("$pid")

for _ in $(seq 1 200); do
  if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then break; fi
  sleep 0.05
done

status=0
# schemathesis keeps a cache in its working directory: the temporary one, not the tree.
cd "$work"
PYTHONPATH="$root/scripts/test${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=contract_hooks \
  schemathesis run "$root/openapi.yaml" --url "http://127.0.0.1:$port" \
  --header "Authorization: Bearer $token" \
  --seed "$CONTRACT_SEED" --max-examples "$examples" --phases examples,coverage,fuzzing,stateful \
  --checks all --workers 1 --no-shrink --request-timeout 10 \
  --warnings off || status=$?

pids=("${pids[@]:0:2}")
kill -TERM "$pid"
wait "$pid" || { echo "contract.sh: httpdnsd did not stop cleanly after the run" >&2; status=${status:-1}; [[ $status -ne 0 ]] || status=1; }
if grep -q -- "$token" "$work/httpdnsd.log"; then
  echo "contract.sh: the admin token reached the log" >&2
  status=1
fi
if [[ $status -ne 0 ]]; then
  echo "--- httpdnsd log (last 40 lines) ---" >&2
  tail -n 40 "$work/httpdnsd.log" >&2
  echo "contract.sh: seed $CONTRACT_SEED (replay with CONTRACT_SEED=$CONTRACT_SEED)" >&2
fi
exit "$status"
