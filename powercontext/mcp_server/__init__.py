"""``/mcp``: the HTTP operations as Model Context Protocol tools.

One POST carries one JSON-RPC message (stateless Streamable HTTP); a tool call
runs the operation's own view in-process, so its validation, authorization,
rate limit, service and error rendering are the HTTP operation's, unchanged.
Protocol messages are the official ``mcp`` SDK's pydantic types
(docs/decisions/0016-mcp-over-wsgi.md).

``catalogue`` describes a tool from its view's models; ``tools`` is the registry
(one entry per tool); ``calls`` runs a tool; ``protocol`` answers one JSON-RPC
message; ``views`` is the endpoint.
"""
