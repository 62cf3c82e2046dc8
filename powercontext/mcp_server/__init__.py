"""``/mcp``: the declared operations as Model Context Protocol tools.

One POST carries one JSON-RPC message (stateless Streamable HTTP), authenticated
once as every API request is. A tool call validates its arguments with the
operation's own models, counts against the caller's write or read limit, and
runs the operation's grant check, call and rendering directly - no second
request - so validation, authorization, rate limit, service and errors are the
HTTP operation's. Protocol messages are the official ``mcp`` SDK's pydantic types
(docs/decisions/0016-mcp-over-wsgi.md, 0039-operations-declared-once.md).

``catalogue`` describes a tool from its operation's declaration; ``tools`` is the
registry (every operation that names a tool); ``calls`` runs a tool;
``protocol`` answers one JSON-RPC message; ``views`` is the endpoint.
"""
