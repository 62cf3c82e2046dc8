"""Talking JSON-RPC to ``/mcp`` in-process (the live tests use the official client)."""

from __future__ import annotations

import itertools
from typing import Any

from tests.conftest import ApiClient

MCP = "/mcp"
_ids = itertools.count(1)


def rpc(api: ApiClient, method: str, params: dict[str, Any] | None = None) -> Any:
    """POST one request; the HTTP response (its JSON is the JSON-RPC message)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": next(_ids), "method": method}
    if params is not None:
        message["params"] = params
    return api.post(MCP, message)


def result_of(response: Any) -> dict[str, Any]:
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"jsonrpc", "id", "result"}, body
    return dict(body["result"])


def call(api: ApiClient, name: str, **arguments: Any) -> dict[str, Any]:
    """The result of ``tools/call``."""
    return result_of(rpc(api, "tools/call", {"name": name, "arguments": arguments}))


def tool_error(result: dict[str, Any], status: int) -> dict[str, Any]:
    """The REST error of an ``isError`` result, checking its text names ``status``."""
    assert result["isError"] is True, result
    envelope = result["structuredContent"]
    assert set(envelope) == {"error"}, envelope
    assert set(envelope["error"]) == {"code", "message", "details"}, envelope
    [text] = result["content"]
    assert f"HTTP error {status}: " in text["text"], text
    assert envelope["error"]["code"] in text["text"]
    return dict(envelope["error"])
