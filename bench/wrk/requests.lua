-- Workload from a file of prepared requests (bench/scale.py writes them): one
-- request per line, "METHOD<TAB>PATH" or "METHOD<TAB>PATH<TAB>JSON BODY". The
-- file is read once per wrk thread in init(); request() then cycles through the
-- list, each thread starting at a different line, so a run touches many rows
-- (random Sources, sessions, positions) instead of one cached answer.
--   BENCH_REQUESTS  path of the request file (besides the common.lua variables)
dofile(os.getenv("BENCH_WRK_DIR") .. "/common.lua")

local prepared = {}

function init(args)
  bench_init("/")
  local name = os.getenv("BENCH_REQUESTS")
  assert(name and name ~= "", "BENCH_REQUESTS is not set")
  local file = assert(io.open(name, "r"))
  for line in file:lines() do
    local method, path, body = line:match("^(%u+)\t([^\t]+)\t?(.*)$")
    assert(method, "bad request line in " .. name .. ": " .. line)
    if body == "" then body = nil end
    table.insert(prepared, wrk.format(method, path, nil, body))
  end
  file:close()
  assert(#prepared > 0, name .. " holds no request")
  counter = (thread_id - 1) * 7919
end

function request()
  counter = counter + 1
  return prepared[(counter % #prepared) + 1]
end
