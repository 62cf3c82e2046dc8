-- Workload "new working notes": every request captures a new working note
-- (POST /v1/sources/working-notes, api.md 5.2) with a source id never used before.
dofile(os.getenv("BENCH_WRK_DIR") .. "/common.lua")

function init(args)
  bench_init("/v1/sources/working-notes")
end

function request()
  local source_id = next_source_id("wn")
  local body = string.format(
    '{"scope_id": "%s", "source_id": "%s", "content": "Inspected %s: the ' ..
    'tokenizer keeps state between calls, so a second parse of the same buffer ' ..
    'starts mid-token. Checked the reset path; it is only reached on error.", ' ..
    '"session_id": "bench-session-%d", "note_kind": "inspection"}',
    scope, source_id, source_id, thread_id)
  return wrk.format(nil, nil, nil, body)
end
