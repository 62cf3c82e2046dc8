-- Workload "exact replays": every request repeats one working note that
-- bench/drive.py captured just before the run, byte for byte (it passes the body
-- in BENCH_REPLAY_BODY), so every answer must be the original receipt (api.md
-- 5.3). Our server marks each with "Idempotent-Replayed: true"; the reference
-- sends no such header.
dofile(os.getenv("BENCH_WRK_DIR") .. "/common.lua")

function init(args)
  bench_init("/v1/sources/working-notes")
  wrk.body = os.getenv("BENCH_REPLAY_BODY")
  assert(wrk.body and wrk.body ~= "", "BENCH_REPLAY_BODY is not set")
  replay_request = wrk.format()
end

function request()
  return replay_request
end
