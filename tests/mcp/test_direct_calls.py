"""A tool call runs its operation directly (decision 0039): the ``/mcp`` request is
authenticated once, and a tool call costs the database what the same operation
over REST costs - no second request, authentication or parse."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from powercontext.api.authentication import BearerTokenAuthentication
from tests.conftest import ApiClient
from tests.mcp.helpers import call

pytestmark = pytest.mark.django_db


@pytest.fixture
def authentications(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The path of every request this service's authentication ran for."""
    seen: list[str] = []
    authenticate = BearerTokenAuthentication.authenticate

    def counted(self: BearerTokenAuthentication, request: Any) -> Any:
        seen.append(request.path)
        return authenticate(self, request)

    monkeypatch.setattr(BearerTokenAuthentication, "authenticate", counted)
    return seen


def _note(scope_id: str, source_id: str) -> dict[str, Any]:
    return {
        "scope_id": scope_id,
        "source_id": source_id,
        "content": "Inspected the tokenizer.",
        "session_id": "sess-1",
        "note_kind": "inspection",
    }


def test_a_tool_call_authenticates_once(
    api: ApiClient, scope_id: str, authentications: list[str]
) -> None:
    result = call(api, "capture_working_note", **_note(scope_id, "n-1"))

    assert result["isError"] is False, result
    assert authentications == ["/mcp"]


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("get_scope", {}),
        ("list_sources", {"limit": 5}),
    ],
)
def test_a_read_tool_authenticates_once(
    api: ApiClient,
    scope_id: str,
    authentications: list[str],
    tool: str,
    arguments: dict[str, Any],
) -> None:
    result = call(api, tool, scope_id=scope_id, **arguments)

    assert result["isError"] is False, result
    assert authentications == ["/mcp"]


def test_a_tool_call_runs_the_queries_of_its_rest_operation(
    api: ApiClient, scope_id: str
) -> None:
    # Both warmed once, so neither pays for a first use of the token.
    api.post("/v1/sources/working-notes", _note(scope_id, "warm-rest"))
    call(api, "capture_working_note", **_note(scope_id, "warm-mcp"))

    with CaptureQueriesContext(connection) as over_rest:
        rest = api.post("/v1/sources/working-notes", _note(scope_id, "n-rest"))
    with CaptureQueriesContext(connection) as over_mcp:
        result = call(api, "capture_working_note", **_note(scope_id, "n-mcp"))

    assert rest.status_code == 202
    assert result["isError"] is False, result
    assert len(over_mcp.captured_queries) == len(over_rest.captured_queries)


def test_a_tool_result_carries_the_rest_answer_as_text_and_as_json(
    api: ApiClient, scope_id: str
) -> None:
    # Non-ASCII text in the id and in the content, whose stored JSON is spliced
    # into answers as it is (never decoded and encoded again).
    content = 'Grüße aus 東京 🚀 \u2028 "quoted" \\ back'
    captured = api.post(
        "/v1/sources/content",
        {"scope_id": scope_id, "source_id": "c-ü", "content": content},
    )
    assert captured.status_code == 202, captured.content
    rest = api.get(f"/v1/scopes/{scope_id}/sources/content/c-%C3%BC")

    result = call(
        api, "get_source", scope_id=scope_id, source_type="content", source_id="c-ü"
    )

    assert result["isError"] is False, result
    assert result["structuredContent"] == rest.json()
    assert result["structuredContent"]["content"] == content
    [text] = result["content"]
    assert text == {"type": "text", "text": rest.content.decode()}
    assert set(result) == {"content", "structuredContent", "isError", "resultType"}
