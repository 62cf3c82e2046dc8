"""The tools in-process: each is its HTTP operation - same models, rules, rows."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from powercontext.mcp_server.tools import REGISTRY
from sessions_app.inputs import SessionPath, WorkingNotesPut
from sources.inputs import CaptureWorkingNote
from sources.models import CaptureAttempt, ContentSource
from tests.conftest import ApiClient
from tests.mcp.helpers import MCP, call, result_of, rpc, tool_error

pytestmark = pytest.mark.django_db

TOOL_NAMES = {
    "create_scope",
    "get_scope",
    "list_scopes",
    "capture_content_source",
    "capture_working_note",
    "finalize_handoff",
    "commit_handoff",
    "continue_handoff",
    "prepare_handoff_hint",
    "activate_handoff",
    "prepare_handoff",
    "get_source",
    "list_sources",
    "search_sources",
    "resolve_evidence",
    "get_session_envelope",
    "fold_working_notes",
    "working_notes_get",
    "working_notes_update",
    "working_notes_clear",
    "close_session",
    "list_legal_holds",
    "set_legal_hold",
    "release_legal_hold",
    "purge_working_notes",
    "redact_source",
    "list_tokens",
    "mint_token",
    "get_token",
    "set_token_expiry",
    "revoke_token",
    "rotate_token",
    "add_token_grant",
    "remove_token_grant",
}


ROOT = Path(__file__).resolve().parents[2]


def _note(scope_id: str, source_id: str = "n-1", **extra: Any) -> dict[str, Any]:
    return {
        "scope_id": scope_id,
        "source_id": source_id,
        "content": "inspected parser.py",
        "session_id": "sess-1",
        "note_kind": "inspection",
        **extra,
    }


def _tools(api: ApiClient) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in result_of(rpc(api, "tools/list"))["tools"]}


def test_the_list_names_every_tool(api: ApiClient) -> None:
    assert set(_tools(api)) == TOOL_NAMES


def test_the_api_page_lists_every_tool() -> None:
    page = (ROOT / "docs" / "api.md").read_text()
    section = page.split("\n## MCP\n", 1)[1].split("\n## ", 1)[0]

    assert set(re.findall(r"^\| `([a-z_]+)`", section, re.MULTILINE)) == set(REGISTRY)


@pytest.mark.parametrize(
    ("name", "models"),
    [
        ("capture_working_note", [CaptureWorkingNote]),
        ("working_notes_update", [SessionPath, WorkingNotesPut]),
    ],
)
def test_input_schemas_are_the_operations_models(
    api: ApiClient, name: str, models: list[Any]
) -> None:
    schema = _tools(api)[name]["inputSchema"]
    expected = [m.model_json_schema(mode="validation") for m in models]

    assert schema["properties"] == {
        k: v for model in expected for k, v in model["properties"].items()
    }
    assert schema["required"] == [k for m in expected for k in m.get("required", [])]
    assert schema["additionalProperties"] is False


def test_annotations_mark_reads_and_the_idempotent_commit(api: ApiClient) -> None:
    tools = _tools(api)

    for name in ("continue_handoff", "prepare_handoff_hint", "get_scope"):
        assert tools[name]["annotations"]["readOnlyHint"] is True
    assert tools["commit_handoff"]["annotations"]["idempotentHint"] is True
    assert "annotations" not in tools["capture_working_note"]


def test_a_note_captured_by_tool_is_the_http_capture(
    api: ApiClient, scope_id: str
) -> None:
    result = call(api, "capture_working_note", **_note(scope_id))
    replay = api.post("/v1/sources/working-notes", _note(scope_id))

    assert result["isError"] is False
    assert result["structuredContent"] == replay.json()
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert replay["Idempotent-Replayed"] == "true"
    row = ContentSource.objects.get(scope_id=scope_id, source_id="n-1")
    assert (row.is_working_note, row.session_id) == (True, "sess-1")


def test_the_rows_name_the_caller_and_the_mcp_requests_id(
    api: ApiClient, scope_id: str
) -> None:
    params = {"name": "capture_working_note", "arguments": _note(scope_id)}

    response = rpc(api, "tools/call", params)

    request_id = response["X-PowerContext-Request-ID"]
    row = ContentSource.objects.get(scope_id=scope_id, source_id="n-1")
    attempt = CaptureAttempt.objects.get(scope_id=scope_id, source_id="n-1")
    assert (row.created_by, row.request_id) == ("root", request_id)
    assert (attempt.principal, attempt.request_id) == ("root", request_id)


def test_a_tool_call_without_the_grant_is_forbidden_and_writes_nothing(
    api: ApiClient, scope_id: str, client_for: Any
) -> None:
    viewer = client_for(f"{scope_id}:viewer")

    error = tool_error(call(viewer, "capture_working_note", **_note(scope_id)), 403)

    assert error["code"] == "forbidden"
    assert not ContentSource.objects.filter(scope_id=scope_id).exists()
    assert call(viewer, "get_scope", scope_id=scope_id)["isError"] is False


@pytest.mark.parametrize(
    ("name", "arguments", "loc", "status"),
    [
        ("capture_working_note", {"note_kind": "diary"}, ["body", "note_kind"], 422),
        ("capture_working_note", {"colour": "blue"}, ["body", "colour"], 422),
        ("capture_working_note", {"content": "\ud800"}, ["body", "content"], 422),
        ("capture_working_note", {"content": 2**60}, ["body", "content"], 422),
        ("get_scope", {"scope_id": None}, ["path", "scope_id"], 422),
        ("get_scope", {"colour": "blue"}, ["arguments", "colour"], 422),
        ("list_scopes", {"binding_kind": "repo"}, ["query", "binding_kind"], 422),
        # The Source list answers 400 for a query value out of range, as on HTTP;
        # a value of another JSON type is refused as a body's would be (422).
        ("list_sources", {"limit": 0}, ["query", "limit"], 400),
        ("list_sources", {"limit": "many"}, ["query", "limit"], 422),
    ],
)
def test_invalid_arguments_are_the_operations_4xx(
    api: ApiClient,
    scope_id: str,
    name: str,
    arguments: dict[str, Any],
    loc: list[Any],
    status: int,
) -> None:
    base = _note(scope_id) if name == "capture_working_note" else {}
    base = {"scope_id": scope_id} if name in ("get_scope", "list_sources") else base

    error = tool_error(call(api, name, **{**base, **arguments}), status)

    assert error["code"] == "invalid_request"
    assert loc in [item["loc"] for item in error["details"]["errors"]]


def test_a_missing_path_argument_is_named(api: ApiClient) -> None:
    error = tool_error(call(api, "working_notes_get", scope_id="s"), 422)

    assert error["details"]["errors"][0]["loc"] == ["path", "session_id"]


def test_an_unknown_tool_is_a_not_found_tool_error(api: ApiClient) -> None:
    error = tool_error(call(api, "drop_everything"), 404)

    assert error["details"] == {"tool": "drop_everything"}


def test_a_different_value_under_the_same_identity_is_a_conflict(
    api: ApiClient, scope_id: str
) -> None:
    call(api, "capture_working_note", **_note(scope_id))

    result = call(api, "capture_working_note", **_note(scope_id, content="other"))

    assert tool_error(result, 409)["code"] == "source_conflict"
    stored = call(
        api, "get_source", scope_id=scope_id, source_type="content", source_id="n-1"
    )
    assert stored["structuredContent"]["content"] == "inspected parser.py"


def test_notes_over_the_cap_are_refused_not_truncated(
    api: ApiClient, scope_id: str
) -> None:
    session = {"scope_id": scope_id, "session_id": "s-1"}
    call(api, "working_notes_update", **session, notes="kept")

    refused = call(api, "working_notes_update", **session, notes="x" * (32 * 1024 + 1))

    assert tool_error(refused, 422)["code"] == "working_notes_too_large"
    notes = call(api, "working_notes_get", **session)["structuredContent"]
    assert notes["notes"] == "kept"


def test_the_posts_conditional_headers_do_not_reach_the_operation(
    api: ApiClient, scope_id: str
) -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "working_notes_update",
            "arguments": {"scope_id": scope_id, "session_id": "s", "notes": "n"},
        },
    }

    response = api.post(MCP, message, headers={"If-Match": '"99"'})

    assert result_of(response)["isError"] is False


def test_fold_answers_text_and_nothing_when_there_are_no_notes(
    api: ApiClient, scope_id: str
) -> None:
    session = {"scope_id": scope_id, "session_id": "s-1"}
    empty = call(api, "fold_working_notes", **session)
    call(api, "working_notes_update", **session, notes="parser done")

    folded = call(api, "fold_working_notes", **session)

    assert (empty["content"], empty["isError"]) == ([], False)
    assert "structuredContent" not in empty
    assert "parser done" in folded["content"][0]["text"]
    assert "structuredContent" not in folded


def test_query_arguments_page_the_list(api: ApiClient, scope_id: str) -> None:
    call(api, "capture_content_source", scope_id=scope_id, source_id="a", content="1")
    call(api, "capture_content_source", scope_id=scope_id, source_id="b", content="2")

    first = call(api, "list_sources", scope_id=scope_id, limit=1)["structuredContent"]
    rest = call(api, "list_sources", scope_id=scope_id, cursor=first["next_cursor"])

    assert [s["source_id"] for s in first["items"]] == ["a"]
    assert [s["source_id"] for s in rest["structuredContent"]["items"]] == ["b"]


def test_tool_calls_count_as_their_operations_writes(
    make_token: Any, scope_id: str
) -> None:
    api = ApiClient(make_token("*:admin", name="mcp-writer"))
    with override_settings(POWERCONTEXT_RATE_LIMIT_WRITE="2/min"):
        results = [
            call(api, "capture_working_note", **_note(scope_id, f"n-{i}"))
            for i in range(3)
        ]
        read = call(api, "get_scope", scope_id=scope_id)

    assert [r["isError"] for r in results] == [False, False, True]
    assert tool_error(results[2], 429)["code"] == "rate_limited"
    assert read["isError"] is False
    assert ContentSource.objects.filter(scope_id=scope_id).count() == 2


def test_search_by_tool_is_the_http_search(api: ApiClient, scope_id: str) -> None:
    call(api, "capture_content_source", scope_id=scope_id, source_id="a", content="x")
    secret = "key sk_live_4fAB9x here"
    call(
        api, "capture_content_source", scope_id=scope_id, source_id="b", content=secret
    )

    result = call(
        api, "search_sources", scope_id=scope_id, q="4fab9x", match="substring"
    )
    http = api.get(f"/v1/scopes/{scope_id}/search?q=4fab9x&match=substring")

    assert result["isError"] is False
    assert result["structuredContent"] == http.json()
    assert [i["source_id"] for i in result["structuredContent"]["items"]] == ["b"]
    assert _tools(api)["search_sources"]["annotations"]["readOnlyHint"] is True
