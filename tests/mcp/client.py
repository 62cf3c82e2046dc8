"""The official MCP client (``streamable_http_client`` + ``ClientSession``), driven
from synchronous tests: each ``session(...)`` is one connection, initialized."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
import httpx2
import mcp.types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

T = TypeVar("T")


def session(
    url: str, token: str | None, steps: Callable[[ClientSession], Awaitable[T]]
) -> T:
    """``steps(session)`` run on an initialized session with ``url``/mcp."""

    async def run() -> T:
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as mcp_session,
        ):
            await mcp_session.initialize()
            return await steps(mcp_session)

    try:
        return anyio.run(run)
    except BaseExceptionGroup as group:  # the client's task groups wrap failures
        leaves = _leaves(group)
        if len(leaves) == 1:
            raise leaves[0] from None
        raise


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        found += _leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc]
    return found


async def ok(session: ClientSession, name: str, **arguments: Any) -> Any:
    """A successful call's ``structuredContent`` (the HTTP answer's body)."""
    result = await session.call_tool(name, arguments)
    assert result.is_error is False, result.content
    [text] = result.content
    assert isinstance(text, types.TextContent)
    assert json.loads(text.text) == result.structured_content
    return result.structured_content


async def failed(session: ClientSession, name: str, **arguments: Any) -> Any:
    """A failed call's REST error object (``code``, ``message``, ``details``)."""
    result = await session.call_tool(name, arguments)
    assert result.is_error is True, result.structured_content
    [text] = result.content
    assert isinstance(text, types.TextContent)
    error = result.structured_content["error"]
    assert text.text.startswith(f"Error calling tool '{name}': HTTP error ")
    assert error["code"] in text.text
    return error
