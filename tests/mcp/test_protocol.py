"""``/mcp`` as a JSON-RPC endpoint: the messages, the protocol faults, auth, limits."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import override_settings
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

from tests.conftest import ApiClient, error_of
from tests.mcp.helpers import MCP, result_of, rpc

pytestmark = pytest.mark.django_db

INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "test", "version": "1"},
}


@pytest.mark.parametrize("version", HANDSHAKE_PROTOCOL_VERSIONS)
def test_initialize_agrees_to_every_version_the_sdk_negotiates(
    api: ApiClient, version: str
) -> None:
    response = rpc(api, "initialize", {**INITIALIZE, "protocolVersion": version})

    result = result_of(response)
    assert result["protocolVersion"] == version
    assert result["serverInfo"]["name"] == "powercontext"
    assert "tools" in result["capabilities"]
    assert "never store secrets" in result["instructions"]
    assert "Mcp-Session-Id" not in response
    assert response["Content-Type"] == "application/json"


def test_initialize_counters_an_unknown_version_with_the_latest(
    api: ApiClient,
) -> None:
    result = result_of(rpc(api, "initialize", {**INITIALIZE, "protocolVersion": "1"}))

    assert result["protocolVersion"] == LATEST_HANDSHAKE_VERSION


def test_ping_answers_an_empty_result(api: ApiClient) -> None:
    assert result_of(rpc(api, "ping")) == {}


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}},
        {"jsonrpc": "2.0", "id": 7, "result": {}},
    ],
)
def test_notifications_and_responses_are_accepted_without_a_body(
    api: ApiClient, message: dict[str, Any]
) -> None:
    response = api.post(MCP, message)

    assert response.status_code == 202
    assert response.content == b""


@pytest.mark.parametrize("path", ["/mcp", "/mcp/"])
def test_both_spellings_of_the_path_answer(api: ApiClient, path: str) -> None:
    response = api.post(path, {"jsonrpc": "2.0", "id": 1, "method": "ping"})

    assert result_of(response) == {}


def test_get_is_405_there_is_no_server_stream(api: ApiClient) -> None:
    response = api.get(MCP)

    assert response.status_code == 405
    assert error_of(response)["code"] == "method_not_allowed"


def _error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"jsonrpc", "id", "error"}, body
    # Every protocol fault has the same keys, -32700 included (data may be null).
    assert set(body["error"]) == {"code", "message", "data"}, body
    return dict(body["error"])


@pytest.mark.parametrize(
    "raw",
    [b"{bad", b"", b'{"jsonrpc": "2.0", "id": 1, "id": 2, "method": "ping"}', b"\xff"],
)
def test_malformed_json_is_a_parse_error(api: ApiClient, raw: bytes) -> None:
    response = api.post(MCP, raw=raw)

    assert _error(response, 400)["code"] == -32700
    assert response.json()["id"] is None
    assert response.json()["error"]["data"] is None  # docs/api.md, MCP errors


@pytest.mark.parametrize(
    "body",
    [
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        "ping",
        {"id": 1, "method": "ping"},
        {"jsonrpc": "1.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "ping"},
    ],
)
def test_what_is_not_one_message_is_an_invalid_request(
    api: ApiClient, body: Any
) -> None:
    assert _error(api.post(MCP, body), 200)["code"] == -32600


def test_an_unknown_method_is_method_not_found(api: ApiClient) -> None:
    response = rpc(api, "resources/list")

    assert _error(response, 200)["code"] == -32601
    assert response.json()["id"] is not None


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"arguments": {}}),
        ("tools/call", {"name": "get_scope", "arguments": ["scope"]}),
        ("tools/call", {"name": 5}),
        ("initialize", {"protocolVersion": "2025-06-18"}),
    ],
)
def test_invalid_params_are_an_invalid_params_error(
    api: ApiClient, method: str, params: dict[str, Any]
) -> None:
    error = _error(rpc(api, method, params), 200)

    assert error["code"] == -32602
    assert error["data"]


@pytest.mark.parametrize("token", [None, "pct_" + "x" * 43])
def test_without_a_valid_token_the_post_is_401_with_a_bearer_challenge(
    token: str | None,
) -> None:
    response = rpc(ApiClient(token), "ping")

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert error_of(response)["code"] == "unauthorized"


@override_settings(POWERCONTEXT_MAX_BODY_BYTES=1024)
def test_the_body_limit_applies_to_the_post(api: ApiClient) -> None:
    response = rpc(api, "ping", {"padding": "x" * 2000})

    assert response.status_code == 413
    assert error_of(response)["code"] == "request_too_large"


def test_protocol_requests_count_as_reads_of_the_principal(
    make_token: Any,
) -> None:
    api = ApiClient(make_token("*:admin", name="mcp-reader"))
    with override_settings(POWERCONTEXT_RATE_LIMIT_READ="2/min"):
        answers = [rpc(api, "ping").status_code for _ in range(3)]
        http_read = api.get("/v1/scopes")

    assert answers == [200, 200, 429]
    assert http_read.status_code == 429


@pytest.mark.parametrize(
    "body",
    [
        '{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}',
        '{"jsonrpc": "2.0", "id": 1, "method": "\\ud800"}',
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "\\ud800"}}',
        '{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"\\ud800": 1}}',
        '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": '
        '"get_scope", "arguments": {"scope_id": "s", "\\ud800": 1}}}',
    ],
)
def test_unpaired_surrogates_are_answered_never_a_500(
    api: ApiClient, body: str
) -> None:
    response = api.post(MCP, raw=body.encode())

    assert response.status_code == 200
    assert set(response.json()) in (
        {"jsonrpc", "id", "error"},
        {"jsonrpc", "id", "result"},
    )


def test_a_message_denser_in_json_nodes_than_its_size_allows_is_413_unread(
    api: ApiClient,
) -> None:
    """As the API's bodies: 7 nodes for every 32 bytes plus 262,144 (each ``[{}]``
    is two)."""
    count = 600_000
    body = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":'
        b'{"name":"list_scopes","arguments":{"padding":['
        + b",".join([b"[{}]"] * count)
        + b"]}}}"
    )

    response = api.post(MCP, raw=body)

    assert response.status_code == 413
    error = error_of(response)
    assert error["code"] == "request_too_large"
    assert error["details"]["reason"] == "too_many_nodes"
    assert error["details"]["max_nodes"] == 7 * len(body) // 32 + 262_144
