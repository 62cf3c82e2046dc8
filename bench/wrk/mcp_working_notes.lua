-- Workload "MCP new working notes": every request is one MCP tools/call of
-- capture_working_note (POST /mcp/, one JSON-RPC message, no session: stateless
-- Streamable HTTP) with a source id never used before - the working_notes
-- workload's note, through the agent hosts' door. "/mcp/": the reference
-- redirects "/mcp" there (307), which wrk would not follow; ours serves both.
-- A tool failure is HTTP 200 with "isError":true: counted as status 590, so the
-- run reports it as a non-2xx answer instead of a success.
dofile(os.getenv("BENCH_WRK_DIR") .. "/common.lua")

function init(args)
  bench_init("/mcp/")
  -- Both answer JSON-RPC as application/json or text/event-stream; a client
  -- must accept both (the reference refuses a request that does not).
  wrk.headers["Accept"] = "application/json, text/event-stream"
  wrk.headers["MCP-Protocol-Version"] = "2025-06-18"
end

function request()
  local source_id = next_source_id("mcp")
  local body = string.format(
    '{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {' ..
    '"name": "capture_working_note", "arguments": {' ..
    '"scope_id": "%s", "source_id": "%s", "content": "Inspected %s: the ' ..
    'tokenizer keeps state between calls, so a second parse of the same buffer ' ..
    'starts mid-token. Checked the reset path; it is only reached on error.", ' ..
    '"session_id": "bench-session-%d", "note_kind": "inspection"}}}',
    counter, scope, source_id, source_id, thread_id)
  return wrk.format(nil, nil, nil, body)
end

local counted_response = response

function response(status, headers, body)
  if status == 200 and string.find(body, '"isError":true', 1, true) then
    status = 590
  end
  counted_response(status, headers, body)
end
