-- Every request asks for a host name never asked before: "<BENCH_TAG>-<thread>-<n>.<BENCH_ZONE>".
--   BENCH_MODE    "resolve": GET {BENCH_PREFIX}{name}  (httpdnsd, BENCH_PREFIX = "/v1/ACCT/resolve?host=")
--                 "doh":     GET /dns-query?dns=base64url(query for name)  (RFC 8484)
--   BENCH_TAG     unique per run, so that no run meets a name cached by an earlier one
--   BENCH_ZONE    e.g. "bench.test"
package.path = os.getenv("BENCH_LUA_DIR") .. "/?.lua;" .. package.path
local common = require("common")

setup = common.setup
done = common.done

local mode, prefix, stem, zone
local n = 0
local headers = {}

function init(args)
  mode = os.getenv("BENCH_MODE") or "resolve"
  prefix = os.getenv("BENCH_PREFIX") or ""
  zone = os.getenv("BENCH_ZONE") or "bench.test"
  stem = (os.getenv("BENCH_TAG") or "x") .. "-" .. tostring(tid or 1) .. "-"
  if mode == "doh" then headers["Accept"] = "application/dns-message" end
end

function request()
  n = n + 1
  local name = stem .. n .. "." .. zone
  if mode == "doh" then
    return wrk.format("GET", "/dns-query?dns=" .. common.base64url(common.dns_query(name)), headers)
  end
  return wrk.format("GET", prefix .. name, headers)
end
