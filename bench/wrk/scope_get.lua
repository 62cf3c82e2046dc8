-- Workload "scope get": GET /v1/scopes/{scope_id} (api.md 4), a read every
-- server here already has; it exercises authentication and the request plumbing
-- without a write.
dofile(os.getenv("BENCH_WRK_DIR") .. "/common.lua")

function init(args)
  bench_init("/v1/scopes/")
  wrk.method = "GET"
  wrk.path = "/v1/scopes/" .. scope
  wrk.headers["Content-Type"] = nil
  get_request = wrk.format()
end

function request()
  return get_request
end
