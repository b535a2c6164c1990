#!/usr/bin/env bash
# The contract run of `make test` (IntegrationTests/ContractTests): schemathesis (fixed seed,
# bounded examples, every phase including the stateful one) against the real httpdnsd binary,
# with the admin token, checking every answer against openapi.yaml. The RFC 8484 operations
# (tag rfc8484: /dns-query, /v1/{accountId}/dns-query) are left out: their input is a binary
# DNS message, which schemathesis cannot draw from the schema (a hook making queries with
# dnspython would bring them in); the DoH JSON answers of GET /dns-query are those of /resolve.
#
# Generated accounts may name any upstream, the public default ones included, so the whole run
# happens in a new network namespace (unshare --user --net) whose only interface is loopback:
# nothing can leave the machine whatever the generator writes. The default account's upstreams
# and fallback are dead loopback ports. Exits with schemathesis' status; 3 when the namespace
# cannot be made.
#
# usage: scripts/test/contract.sh /path/to/httpdnsd [max-examples]
set -euo pipefail

binary=${1:?usage: contract.sh HTTPDNSD_BINARY [MAX_EXAMPLES]}
examples=${2:-10}
root=$(cd "$(dirname "$0")/../.." && pwd)

if [[ -z ${HTTPDNS_CONTRACT_NETNS:-} ]]; then
  if ! unshare --user --map-root-user --net true 2>/dev/null; then
    echo "contract.sh: cannot create a network namespace (unshare --user --net); the run needs one to stay on loopback" >&2
    exit 3
  fi
  exec env HTTPDNS_CONTRACT_NETNS=1 unshare --user --map-root-user --net "$0" "$@"
fi

ip link set lo up
work=$(mktemp -d)
token="contract-admin-token-$$"
port=18080
"$binary" --listen "127.0.0.1:$port" --db "$work/httpdnsd.sqlite" --admin-token "$token" \
  --upstreams "doh:http://127.0.0.1:9/dns-query" --localdns-servers "127.0.0.1:9" --localdns-fallback false --shutdown-drain 0 \
  >"$work/httpdnsd.log" 2>&1 &
pid=$!
cleanup() {
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

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
  --seed 20261202 --max-examples "$examples" --phases examples,coverage,fuzzing,stateful \
  --exclude-tag rfc8484 \
  --exclude-checks not_a_server_error --workers 1 --no-shrink --request-timeout 10 \
  --warnings off || status=$?

kill -TERM "$pid"
wait "$pid" || { echo "contract.sh: httpdnsd did not stop cleanly after the run" >&2; status=${status:-1}; [[ $status -ne 0 ]] || status=1; }
if grep -q -- "$token" "$work/httpdnsd.log"; then
  echo "contract.sh: the admin token reached the log" >&2
  status=1
fi
if [[ $status -ne 0 ]]; then
  echo "--- httpdnsd log (last 40 lines) ---" >&2
  tail -n 40 "$work/httpdnsd.log" >&2
fi
exit "$status"
