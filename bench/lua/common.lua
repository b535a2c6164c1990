-- Shared by the wrk scripts: thread numbering and the machine-readable summary line that
-- bench/run.py parses ("BENCHJSON {...}").
local common = {}

local threads = {}

-- Gives every wrk thread a number (global `tid` in the thread, 1-based).
function common.setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
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
