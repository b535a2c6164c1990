#!/bin/sh
# Times a one-entry cache page and a /stats page at N cached names, and RSS after a flush
# (issue 14, bounded reads). Loopback only: unbound answers every name under bench.test with
# 127.0.0.1 as the fallback resolver; the DoH upstream is a closed loopback port, refused at once.
# Usage: bench/paging.sh [BINARY] [N]   (default: .build/release/httpdnsd, 300000)
set -eu
BIN=${1:-.build/release/httpdnsd}
N=${2:-300000}
DIR=$(mktemp -d)
trap 'kill $HTTPDNSD_PID $UNBOUND_PID 2>/dev/null || true; rm -rf "$DIR"' EXIT
cat > "$DIR/unbound.conf" <<CONF
server:
  interface: 127.0.0.1@55399
  do-daemonize: no
  use-syslog: no
  chroot: ""
  username: ""
  directory: "$DIR"
  pidfile: ""
  access-control: 127.0.0.0/8 allow
  local-zone: "bench.test." redirect
  local-data: "bench.test. 3600 IN A 127.0.0.1"
CONF
unbound -c "$DIR/unbound.conf" & UNBOUND_PID=$!
cat > "$DIR/httpdnsd.json" <<CONF
{"listen": "127.0.0.1:58080", "db": "$DIR/httpdnsd.sqlite", "maxPreloadHosts": 10000, "preloadConcurrency": 64,
 "accounts": {"default": {"upstreams": ["doh:http://127.0.0.1:9/dns-query"], "localDNSFallback": true,
   "localDNSServers": ["127.0.0.1:55399"], "cacheCountLimit": $((N + N / 4)), "maxCacheTTL": 3600}}}
CONF
"$BIN" --config "$DIR/httpdnsd.json" 2>"$DIR/log" & HTTPDNSD_PID=$!
sleep 1
URL=http://127.0.0.1:58080/v1/default
rss() { awk '/VmRSS/ {print $2 " kB"}' /proc/$HTTPDNSD_PID/status; }
i=0
while [ $i -lt "$N" ]; do
  python3 -c "import json,sys; s,n=int(sys.argv[1]),int(sys.argv[2]); print(json.dumps({'hosts':['n%d.bench.test'%k for k in range(s,min(s+10000,n))],'type':'A'}))" $i "$N" \
    | curl -s -o /dev/null -H 'Content-Type: application/json' --data-binary @- "$URL/preload"
  i=$((i + 10000))
done
echo "preloaded $N names; RSS $(rss)"
for run in 1 2 3 4 5; do curl -s -o /dev/null -w "cache?limit=1: %{time_total}s\n" "$URL/cache?limit=1"; done
curl -s -o /dev/null -w "cache?limit=1000: %{time_total}s %{size_download} bytes\n" "$URL/cache?limit=1000"
for run in 1 2 3; do curl -s -o /dev/null -w "stats (first page, default limit): %{time_total}s %{size_download} bytes\n" "$URL/stats"; done
echo "RSS before flush: $(rss)"
echo "flush (cached entries): $(curl -s -X DELETE "$URL/cache")"
sleep 2
echo "RSS after flush: $(rss)"
