-- Shared by the wrk scripts: thread numbering and the machine-readable summary line that
-- bench/run.py parses ("BENCHJSON {...}").
local common = {}

local threads = {}

-- Gives every wrk thread a number (global `tid` in the thread, 1-based).
function common.setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

-- wrk runs each thread's `init` just before it creates that thread, and starts its clock only
-- once the last thread exists. A thread whose `init` takes long (formatting a list of a million
-- names takes over a second) would otherwise let the threads created before it send requests
-- that are counted against no time: the benchmark once reported hits over 1 000 000 names 1.2 to
-- 1.6 times faster than over 10 000 for that reason alone. So every thread marks the end of its
-- `init` in the directory BENCH_BARRIER (made for one wrk run), and `common.wait_for_all` holds
-- a thread's first request until every thread has.
local function marker(n)
  return os.getenv("BENCH_BARRIER") .. "/ready-" .. n
end

function common.mark_ready()
  if not os.getenv("BENCH_BARRIER") then return end
  local f = assert(io.open(marker(tid or 1), "w"))
  f:close()
end

local all_ready = false
local calls = 0

-- wrk 4.1 calls the first thread's `request` once from its main thread, right after that
-- thread's `init`, to check the request (script_verify_request): that call must not wait, or it
-- would wait for threads not created yet. And should a marker never come, the wait gives up
-- after 60 s and says so rather than hang the benchmark.
function common.wait_for_all()
  if all_ready or not os.getenv("BENCH_BARRIER") then return end
  calls = calls + 1
  if calls == 1 and (tid or 1) == 1 then return end
  local threads = tonumber(os.getenv("BENCH_WRK_THREADS") or "1")
  local deadline = os.time() + 60
  for n = 1, threads do
    while os.time() < deadline do
      local f = io.open(marker(n), "r")
      if f then f:close() break end
      os.execute("sleep 0.005")
    end
  end
  if os.time() >= deadline then io.stderr:write("wrk barrier: gave up waiting for every thread's init\n") end
  all_ready = true
end

function common.done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCHJSON {"requests":%d,"duration_us":%d,"bytes":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,' ..
    '"max_us":%d,"mean_us":%.1f,"err_connect":%d,"err_read":%d,"err_write":%d,"err_status":%d,"err_timeout":%d}\n',
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout))
end

-- base64url without padding (RFC 4648 section 5), as RFC 8484 GET wants.
local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
local symbols = {}
for k = 1, 64 do symbols[k - 1] = alphabet:sub(k, k) end

function common.base64url(s)
  local out = {}
  local len = #s
  for k = 1, len, 3 do
    local a, b, c = s:byte(k, k + 2)
    local n = a * 65536 + (b or 0) * 256 + (c or 0)
    local c1 = math.floor(n / 262144) % 64
    local c2 = math.floor(n / 4096) % 64
    local c3 = math.floor(n / 64) % 64
    local c4 = n % 64
    out[#out + 1] = symbols[c1] .. symbols[c2]
    if b then out[#out + 1] = symbols[c3] end
    if c then out[#out + 1] = symbols[c4] end
  end
  return table.concat(out)
end

-- A DNS query (id 0, RD, one question, class IN) for `name`, type A.
function common.dns_query(name)
  local parts = { "\0\0\1\0\0\1\0\0\0\0\0\0" }
  for label in name:gmatch("[^.]+") do
    parts[#parts + 1] = string.char(#label) .. label
  end
  parts[#parts + 1] = "\0\0\1\0\1"
  return table.concat(parts)
end

return common
