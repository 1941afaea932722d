-- wrk script of tools/bench/run.sh: GETs the request targets listed in a file (one
-- "path?query" a line, args[1]), round-robin from a random start per thread, and prints
-- the summary as one JSON line prefixed "WRKJSON " for run.py to parse.
-- nginx ignores the query string, so both servers get byte-identical requests.
local paths = {}
local i = 0

function init(args)
  for line in io.lines(args[1]) do
    if #line > 0 then
      paths[#paths + 1] = line
    end
  end
  math.randomseed(os.time() + tonumber(tostring(paths):match("0x(%x+)") or "0", 16) % 1000)
  i = math.random(#paths) - 1
end

function request()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"bytes":%d,"errors_connect":%d,' ..
    '"errors_read":%d,"errors_write":%d,"errors_status":%d,"errors_timeout":%d,' ..
    '"p50_us":%d,"p90_us":%d,"p99_us":%d,"mean_us":%.1f,"max_us":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write,
    e.status, e.timeout, latency:percentile(50.0), latency:percentile(90.0),
    latency:percentile(99.0), latency.mean, latency.max))
end
