"""No message and no arguments make ``/mcp`` answer a 500: random JSON-RPC messages
and random arguments to every tool (hypothesis), in-process."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from powercontext.mcp_server.tools import REGISTRY
from tests.conftest import ApiClient
from tests.mcp.helpers import MCP

pytestmark = pytest.mark.django_db

# Every code point, lone surrogates and NUL included (json.dumps escapes them).
TEXT = st.text(st.characters(exclude_categories=()), max_size=20)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64), max_value=2**64)
    | st.floats(allow_nan=False)
    | TEXT,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4)
    ),
    max_leaves=12,
)
NAMES = "scope_id session_id source_id source_type content notes limit cursor draft"
ARGUMENT_NAMES = (
    st.sampled_from([*NAMES.split(), "handoff", "selection", "refs"]) | TEXT
)
FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _answered(response: Any) -> None:
    assert response.status_code in (200, 202, 400, 413), response.content
    if response.status_code != 202:
        json.loads(response.content)


@FUZZ
@given(
    name=st.sampled_from(sorted(REGISTRY)) | TEXT,
    arguments=st.dictionaries(ARGUMENT_NAMES, JSON, max_size=5),
)
def test_random_arguments_to_any_tool(
    api: ApiClient, name: str, arguments: dict[str, Any]
) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }

    response = api.post(MCP, raw=json.dumps(message).encode())

    _answered(response)


@FUZZ
@given(
    message=st.dictionaries(
        st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]),
        JSON | st.sampled_from(["2.0", "initialize", "tools/call", "tools/list"]),
        max_size=5,
    )
    | JSON
)
def test_random_messages(api: ApiClient, message: Any) -> None:
    _answered(api.post(MCP, raw=json.dumps(message).encode()))
