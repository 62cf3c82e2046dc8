"""The reference client against our Source operations (api.md 0, 5, 6)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.compat,
    pytest.mark.django_db(transaction=True),
]

SCOPE = {
    "op": "create_scope",
    "request": {"title": "T", "summary": "S", "idempotency_key": "k"},
}


def test_client_captures_reads_and_lists(
    reference_client: Callable, make_token: Callable[..., str]
) -> None:
    expires = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    capture = {
        "scope_id": "$0.scope_id",
        "source_id": "notes/a b%",
        "content": "hello",
        "metadata": {"b": 1, "a": [1, 2]},
    }
    note = {
        "scope_id": "$0.scope_id",
        "source_id": "wn-1",
        "content": "inspected",
        "session_id": "sess",
        "note_kind": "inspection",
        "expires_at": expires,
    }

    results = reference_client(
        make_token("*:admin"),
        [
            SCOPE,
            {"op": "capture_content_source", "request": capture},
            {"op": "capture_content_source", "request": capture},
            {"op": "capture_working_note", "request": note},
            {"op": "capture_working_note", "request": note},
            {"op": "get_source", "args": ["$0.scope_id", "content", "notes/a b%"]},
            {
                "op": "create_source",
                "args": ["$0.scope_id"],
                "request": {"content": {"z": 1}},
            },
            {"op": "list_sources", "args": ["$0.scope_id"]},
            {"op": "list_sources", "args": ["$0.scope_id"], "request": {"limit": 2}},
            {
                "op": "list_sources",
                "args": ["$0.scope_id"],
                "request": {"limit": 2, "cursor": "$8.next_cursor"},
            },
        ],
    )

    assert all("ok" in result for result in results), results
    receipt = {
        "status": "accepted",
        "source": {"name": "content", "source_id": "notes/a b%"},
        "position": 1,
    }
    assert results[1]["ok"] == results[2]["ok"] == receipt
    assert results[3]["ok"]["position"] == results[4]["ok"]["position"] == 2
    assert results[5]["ok"]["content"] == "hello"
    assert results[6]["ok"]["position"] == 3
    listed = [item["source_id"] for item in results[7]["ok"]["items"]]
    assert listed == ["notes/a b%", "wn-1", results[6]["ok"]["source_id"]]
    paged = results[8]["ok"]["items"] + results[9]["ok"]["items"]
    assert [item["position"] for item in paged] == [1, 2, 3]
    assert results[9]["ok"]["next_cursor"] is None


def test_client_sees_conflicts_and_missing_sources(
    reference_client: Callable, make_token: Callable[..., str]
) -> None:
    results = reference_client(
        make_token("*:admin"),
        [
            SCOPE,
            {
                "op": "capture_content_source",
                "request": {
                    "scope_id": "$0.scope_id",
                    "source_id": "c",
                    "content": "one",
                },
            },
            {
                "op": "capture_content_source",
                "request": {
                    "scope_id": "$0.scope_id",
                    "source_id": "c",
                    "content": "two",
                },
            },
            {"op": "get_source", "args": ["$0.scope_id", "content", "missing"]},
            {
                "op": "capture_content_source",
                "request": {"scope_id": "scp_nope", "source_id": "c", "content": "x"},
            },
            {
                "op": "capture_working_note",
                "request": {
                    "scope_id": "$0.scope_id",
                    "source_id": "old",
                    "content": "x",
                    "session_id": "s",
                    "note_kind": "inspection",
                    "expires_at": "2001-01-01T00:00:00Z",
                },
            },
        ],
    )

    assert results[2]["error"]["status_code"] == 409
    assert results[2]["error"]["code"] == "source_conflict"
    assert (results[3]["error"]["status_code"], results[3]["error"]["code"]) == (
        404,
        "source_not_found",
    )
    assert (results[4]["error"]["status_code"], results[4]["error"]["code"]) == (
        404,
        "scope_not_found",
    )
    assert results[5]["error"]["status_code"] == 422
    assert results[5]["error"]["details"] == {
        "field": "expires_at",
        "reason": "not_in_future",
    }
