"""A tool's body arguments are refused for what a REST body is refused for.

The walk over the arguments for unstorable values runs only when the POSTed
message's bytes hint at one (``powercontext/api/parsers.py``), as the REST
parser skips it for a body without such a hint. So every way an unstorable value
can arrive in a message is sent here as the bytes a client would send - including
the ones the SDK's JSON reading admits and the REST parser does not (``NaN``, a
surrogate written raw in UTF-8, a message in UTF-16) - and each must be a 422 tool
error that stores nothing.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sources.models.registry import ContentSource
from tests.conftest import ApiClient
from tests.mcp.helpers import MCP, call, result_of, tool_error

pytestmark = pytest.mark.django_db


def _message(scope_id: str, value: str) -> str:
    """A capture_content_source call whose metadata holds the JSON text ``value``."""
    return (
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": '
        '"capture_content_source", "arguments": {"scope_id": "' + scope_id + '", '
        '"source_id": "c-1", "content": "text", "metadata": {"v": ' + value + "}}}}"
    )


@pytest.mark.parametrize(
    ("value", "encoding", "error_type"),
    [
        ('"a\\u0000b"', "utf-8", "string_unstorable"),
        ('"a\\ud800b"', "utf-8", "string_unstorable"),
        ('"a\\uDFFFb"', "utf-8", "string_unstorable"),
        ('"a\udc80b"', "utf-8-surrogatepass", "string_unstorable"),
        ("9007199254740993", "utf-8", "number_unsupported"),
        ("-12345678901234567890", "utf-8", "number_unsupported"),
        ('"a\\u0000b"', "utf-16", "string_unstorable"),
        ("9007199254740993", "utf-32", "number_unsupported"),
    ],
)
def test_an_unstorable_value_in_any_spelling_is_refused(
    api: ApiClient, scope_id: str, value: str, encoding: str, error_type: str
) -> None:
    text = _message(scope_id, value)
    if encoding == "utf-8-surrogatepass":
        raw = text.encode("utf-8", "surrogatepass")
    else:
        raw = text.encode(encoding)

    response = api.post(MCP, raw=raw)

    error = tool_error(result_of(response), 422)
    assert [item["type"] for item in error["details"]["errors"]] == [error_type]
    assert error["details"]["errors"][0]["loc"][:3] == ["body", "metadata", "v"]
    assert _stored(api, scope_id) == []


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400", "-1E+999"])
def test_a_number_json_cannot_hold_is_not_json(
    api: ApiClient, scope_id: str, value: str
) -> None:
    response = api.post(MCP, raw=_message(scope_id, value).encode())

    error = tool_error(result_of(response), 422)
    assert [item["type"] for item in error["details"]["errors"]] == ["json_invalid"]
    assert _stored(api, scope_id) == []


@pytest.mark.parametrize(
    "value", ['"caf\\u00e9 \\u6f22"', '"café 漢 🙂"', "123456789012345", "1.5e300"]
)
def test_storable_values_near_the_hints_are_stored(
    api: ApiClient, scope_id: str, value: str
) -> None:
    response = api.post(MCP, raw=_message(scope_id, value).encode())

    result = result_of(response)
    assert result["isError"] is False, result
    [_listed] = _stored(api, scope_id)
    # The reads do not return metadata: the row is what was stored.
    stored = ContentSource.objects.get(scope_id=scope_id, source_id="c-1")
    assert stored.metadata == {"v": json.loads(value)}


def _stored(api: ApiClient, scope_id: str) -> list[dict[str, Any]]:
    listed = call(api, "list_sources", scope_id=scope_id)
    return list(listed["structuredContent"]["items"])
