"""``POST /mcp``: the endpoint agent hosts talk MCP to (``GET`` is 405).

Authentication is the API's: no token or a bad one is HTTP 401 with
``WWW-Authenticate: Bearer`` before the body is read. Rate limits: a tool call
counts as its operation does (a write or a read, ``calls``); any
other request counts as a read here. Outside the OpenAPI document: it answers
JSON-RPC, not the REST API (docs/api.md, "MCP").
"""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.views import APIView


class McpView(APIView):
    throttle_classes: list = []

    @extend_schema(exclude=True)
    def post(self, request: Request) -> HttpResponse:
        # Here, not at import: the URL conf imports this module in every worker.
        from .endpoint import answer

        reply = answer(request)
        if reply.message is None:
            accepted = HttpResponse(status=reply.status)
            del accepted["Content-Type"]
            return accepted
        return HttpResponse(
            reply.body(), status=reply.status, content_type="application/json"
        )
