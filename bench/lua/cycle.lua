-- Cycles through a fixed list of request targets, pre-formatted in init so that wrk spends as
-- little as possible per request. Every thread starts at a different offset.
--   BENCH_LIST    file, one item a line (a host name, or a base64url DNS query)
--   BENCH_PREFIX  put before each item: "/v1/bench/resolve?host=" or "/dns-query?dns=", or ""
--                 when the items are whole request targets (signed URLs: run.py's section 9)
--   BENCH_ACCEPT  optional Accept header ("application/dns-message" for RFC 8484)
--   BENCH_WRK_THREADS  the -t value (for the offsets)
--   BENCH_BARRIER  a fresh directory: no thread sends before every thread's list is built
package.path = os.getenv("BENCH_LUA_DIR") .. "/?.lua;" .. package.path
local common = require("common")

setup = common.setup
done = common.done

local requests, count, index

function init(args)
  local prefix = os.getenv("BENCH_PREFIX")
  local accept = os.getenv("BENCH_ACCEPT")
  local headers = {}
  if accept and accept ~= "" then headers["Accept"] = accept end
  requests = {}
  for line in io.lines(os.getenv("BENCH_LIST")) do
    if line ~= "" then requests[#requests + 1] = wrk.format("GET", prefix .. line, headers) end
  end
  count = #requests
  local threads = tonumber(os.getenv("BENCH_WRK_THREADS") or "1")
  index = math.floor(((tid or 1) - 1) * count / threads)
  common.mark_ready()
end

function request()
  common.wait_for_all()
  index = index + 1
  if index > count then index = 1 end
  return requests[index]
end
