"""``POST /mcp``: the endpoint agent hosts talk MCP to (``GET`` is 405).

Authentication is the API's: no token or a bad one is HTTP 401 with
``WWW-Authenticate: Bearer`` before the body is read. Rate limits: a tool call
counts as its operation does (a write or a read, in the view it runs); any
other request counts as a read here. Outside the OpenAPI document: it answers
JSON-RPC, not the REST API (docs/api.md, "MCP").
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import mcp_types as types
from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import Throttled
from rest_framework.request import Request
from rest_framework.views import APIView

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
            return  # limited as its operation, by the operation's view
        decision = principal_limit(principal_of(self.request).name, write=False)
        if not decision.allowed:
            raise Throttled(wait=decision.retry_after)

    def list_tools(self) -> types.ListToolsResult:
        return _tool_list()

    def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return tool_call(self.request._request, REGISTRY, name, arguments)


class McpView(APIView):
    throttle_classes: list = []

    @extend_schema(exclude=True)
    def post(self, request: Request) -> HttpResponse:
        answer = protocol.reply(request.body, _Endpoint(request))
        if answer.message is None:
            accepted = HttpResponse(status=answer.status)
            del accepted["Content-Type"]
            return accepted
        return HttpResponse(
            answer.body(), status=answer.status, content_type="application/json"
        )
