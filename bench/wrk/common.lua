-- Shared part of the bench/wrk/*.lua workloads (loaded with dofile by each one).
--
-- Reads the target from the environment (set by bench/drive.py):
--   BENCH_SCOPE   scope id to capture into        BENCH_TOKEN   bearer token, empty = none
--   BENCH_NONCE   run nonce, keeps source ids unique across runs and servers
--   BENCH_EXPECT  the status(es) every response must have: "202" for captures,
--                 "200,201" for an envelope write that may create the envelope
-- Each thread counts statuses and replay markers; done() adds them up and prints
-- one line "BENCH_JSON {...}" with the totals and latency percentiles (in
-- microseconds), which bench/drive.py parses.

local threads = {}
local thread_count = 0

function setup(thread)
  thread_count = thread_count + 1
  thread:set("thread_id", thread_count)
  table.insert(threads, thread)
end

-- Globals of each thread's Lua state (read back in done() via thread:get).
counter = 0
statuses = {}
replayed = 0
unexpected_body = nil

function bench_init(path)
  scope = os.getenv("BENCH_SCOPE")
  nonce = os.getenv("BENCH_NONCE")
  expected = {}
  for code in string.gmatch(os.getenv("BENCH_EXPECT") or "202", "%d+") do
    expected[tonumber(code)] = true
  end
  assert(scope and scope ~= "", "BENCH_SCOPE is not set")
  assert(nonce and nonce ~= "", "BENCH_NONCE is not set")
  wrk.method = "POST"
  wrk.path = path
  wrk.headers["Content-Type"] = "application/json"
  local token = os.getenv("BENCH_TOKEN") or ""
  if token ~= "" then
    wrk.headers["Authorization"] = "Bearer " .. token
  end
end

-- A source id no other request of any run will use: nonce, thread, counter.
function next_source_id(prefix)
  counter = counter + 1
  return string.format("%s-%s-t%d-%d", prefix, nonce, thread_id, counter)
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if headers["Idempotent-Replayed"] == "true" then
    replayed = replayed + 1
  end
  if not expected[status] and unexpected_body == nil then
    unexpected_body = string.sub(body, 1, 300)
  end
end

local function json_string(text)
  return '"' .. text:gsub('[%c"\\]', function(c)
    return string.format("\\u%04x", string.byte(c))
  end) .. '"'
end

function done(summary, latency, requests)
  local by_status, total_replayed, sample = {}, 0, nil
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("statuses")) do
      by_status[status] = (by_status[status] or 0) + count
    end
    total_replayed = total_replayed + thread:get("replayed")
    sample = sample or thread:get("unexpected_body")
  end
  local status_parts = {}
  for status, count in pairs(by_status) do
    table.insert(status_parts, string.format('"%d": %d', status, count))
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests": %d, "duration_us": %d, "bytes": %d, ' ..
    '"latency_us": {"p50": %d, "p90": %d, "p99": %d, "mean": %.1f, "max": %d}, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, ' ..
    '"statuses": {%s}, "replayed_header": %d, "unexpected_body": %s}\n',
    summary.requests, summary.duration, summary.bytes,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.mean, latency.max,
    e.connect, e.read, e.write, e.status, e.timeout,
    table.concat(status_parts, ", "), total_replayed,
    sample and json_string(sample) or "null"))
end
