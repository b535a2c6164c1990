#!/bin/bash
# Container health check for httpdnsd without curl: GET /healthz through bash's /dev/tcp.
# Asks the first plain-HTTP listener of HTTPDNS_OPS_LISTEN, HTTPDNS_LISTEN_PLAIN, HTTPDNS_LISTEN
# (the image sets HTTPDNS_LISTEN=0.0.0.0:8080; with HTTPS on HTTPDNS_LISTEN set one of the other
# two); exits 0 when the service answers 200, 1 otherwise. Usable as HEALTHCHECK or `--health-cmd`.
set -u
listen=${HTTPDNS_OPS_LISTEN:-${HTTPDNS_LISTEN_PLAIN:-${HTTPDNS_LISTEN:-127.0.0.1:8080}}}
port=${listen##*:}
host=${listen%:*}
host=${host#[}
host=${host%]}
case $host in
  0.0.0.0 | "") host=127.0.0.1 ;;
  ::) host=::1 ;;
esac
exec 3<>"/dev/tcp/$host/$port" || exit 1
printf 'GET /healthz HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n' "$listen" >&3
IFS= read -r -t 4 status <&3 || exit 1
exec 3<&-
[[ $status == HTTP/1.[01]\ 200* ]] || exit 1
