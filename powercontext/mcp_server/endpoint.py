"""What ``McpView`` answers with: the tool list, the rate limit, a tool call.

Imported by the view on its first request, not with the URL conf: the MCP types
stay out of workers that never serve ``/mcp`` (docs/decisions/0016-mcp-over-wsgi.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import mcp_types as types
from rest_framework.exceptions import Throttled
from rest_framework.request import Request

from powercontext.api.parsers import check_json_nodes
from powercontext.api.permissions import principal_of
from powercontext.api.ratelimit import principal_limit

from . import protocol
from .calls import tool_call
from .tools import REGISTRY, TOOLS


@cache
def _tool_list() -> types.ListToolsResult:
    """Generated from the models once per process."""
    return types.ListToolsResult(tools=[tool.definition() for tool in TOOLS])


@dataclass(frozen=True)
class _Endpoint:
    request: Request

    def before_request(self, method: str) -> None:
        if method == "tools/call":
            return  # limited as its operation is (``calls``)
        decision = principal_limit(principal_of(self.request).name, write=False)
        if not decision.allowed:
            raise Throttled(wait=decision.retry_after)

    def list_tools(self) -> types.ListToolsResult:
        return _tool_list()

    def call_tool(
        self, name: str, arguments: dict[str, Any]
    ) -> types.CallToolResult | protocol.Rendered:
        return tool_call(self.request, REGISTRY, name, arguments)


def answer(request: Request) -> protocol.Reply:
    """The reply to the JSON-RPC message POSTed in ``request``; a body holding more
    JSON nodes than its size allows is refused (413) before it is read, as the
    API's bodies are."""
    raw = request.body
    check_json_nodes(raw)
    return protocol.reply(raw, _Endpoint(request))
