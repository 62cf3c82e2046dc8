-- Workload "new content captures": every request captures a new plain Source
-- (POST /v1/sources/content, api.md 5.1) with small descriptive metadata.
dofile(os.getenv("BENCH_WRK_DIR") .. "/common.lua")

function init(args)
  bench_init("/v1/sources/content")
end

function request()
  local source_id = next_source_id("src")
  local body = string.format(
    '{"scope_id": "%s", "source_id": "%s", "content": "Design note %s: ' ..
    'positions are handed out by the journal head of the scope, one row per ' ..
    'scope, locked for the length of the capture transaction.", ' ..
    '"metadata": {"origin": "bench", "thread": %d, "n": %d}}',
    scope, source_id, source_id, thread_id, counter)
  return wrk.format(nil, nil, nil, body)
end
