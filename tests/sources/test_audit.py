"""The audit view (api.md 6.1): records with note fields, state, attempts; filters."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine

from tests.conftest import ApiClient, error_of

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def put(api: ApiClient, scope_id: str, source_id: str, content: str = "c") -> Any:
    return api.post(
        "/v1/sources/content",
        {"scope_id": scope_id, "source_id": source_id, "content": content},
    )


def put_note(api: ApiClient, scope_id: str, source_id: str, **fields: Any) -> Any:
    body = {
        "scope_id": scope_id,
        "source_id": source_id,
        "content": "n",
        "session_id": "s1",
        "note_kind": "inspection",
        **fields,
    }
    return api.post("/v1/sources/working-notes", body)


@pytest.fixture
def clock() -> Any:
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def populated(api: ApiClient, scope_id: str, clock: Any) -> str:
    put(api, scope_id, "plain")  # 1
    put_note(api, scope_id, "n-active")  # 2
    put_note(api, scope_id, "n-expiring", expires_at="2026-06-01T13:00:00Z")  # 3
    put_note(api, scope_id, "n-other", session_id="s2", note_kind="validation")  # 4
    clock.move_to(NOW + timedelta(hours=2))
    return scope_id


def audit(api: ApiClient, scope_id: str, **query: Any) -> Any:
    return api.get(f"/v1/scopes/{scope_id}/source-audit", query=query)


def test_audit_record_shape(api: ApiClient, populated: str) -> None:
    record = api.get(f"/v1/scopes/{populated}/source-audit/content/n-expiring").json()

    assert record == {
        "receipt_identity": None,
        "scope_id": populated,
        "source_type": "content",
        "source_id": "n-expiring",
        "content": "n",
        "position": 3,
        "content_digest": record["content_digest"],
        "metadata": {
            "kind": "working_note",
            "session_id": "s1",
            "note_kind": "inspection",
            "expires_at": "2026-06-01T13:00:00Z",
        },
        "working_note": True,
        "session_id": "s1",
        "note_kind": "inspection",
        "expires_at": "2026-06-01T13:00:00Z",
        "state": "expired",
        "created_at": "2026-06-01T12:00:00Z",
        "created_by": "root",
        "request_id": record["request_id"],
        "closed_at": None,
        "purged_at": None,
        "purge_run": None,
        "attempts_total": 1,
        "attempts": [
            {
                "outcome": "accepted",
                "reason": None,
                "at": "2026-06-01T12:00:00Z",
                "principal": "root",
                "request_id": record["request_id"],
            }
        ],
    }


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({}, ["plain", "n-active", "n-expiring", "n-other"]),
        ({"working_note": "true"}, ["n-active", "n-expiring", "n-other"]),
        ({"working_note": "false"}, ["plain"]),
        ({"session_id": "s1"}, ["n-active", "n-expiring"]),
        ({"session_id": "S1"}, []),
        ({"note_kind": "validation"}, ["n-other"]),
        ({"state": "expired"}, ["n-expiring"]),
        ({"state": "active"}, ["plain", "n-active", "n-other"]),
        ({"state": "active", "working_note": "true", "session_id": "s1"}, ["n-active"]),
        ({"after_position": "2"}, ["n-expiring", "n-other"]),
    ],
)
def test_audit_filters(
    api: ApiClient, populated: str, query: dict, expected: list[str]
) -> None:
    items = audit(api, populated, **query).json()["items"]

    assert [item["source_id"] for item in items] == expected


def test_state_is_computed_at_read_time(
    api: ApiClient, scope_id: str, clock: Any
) -> None:
    put_note(api, scope_id, "n", expires_at="2026-06-01T12:30:00Z")

    before = api.get(f"/v1/scopes/{scope_id}/source-audit/content/n").json()["state"]
    clock.move_to(datetime(2026, 6, 1, 12, 30, tzinfo=UTC))
    at_expiry = api.get(f"/v1/scopes/{scope_id}/source-audit/content/n").json()["state"]

    assert (before, at_expiry) == ("active", "expired")


def test_audit_pages_with_a_cursor_bound_to_its_filters(
    api: ApiClient, populated: str
) -> None:
    first = audit(api, populated, limit=1, working_note="true").json()
    second = audit(
        api, populated, limit=1, working_note="true", cursor=first["next_cursor"]
    ).json()
    mismatched = audit(api, populated, limit=1, cursor=first["next_cursor"])

    assert [i["source_id"] for i in first["items"] + second["items"]] == [
        "n-active",
        "n-expiring",
    ]
    assert mismatched.status_code == 400
    assert error_of(mismatched)["code"] == "invalid_cursor"


def test_attempts_show_every_outcome_oldest_first(
    api: ApiClient, scope_id: str
) -> None:
    put(api, scope_id, "c")
    put(api, scope_id, "c")
    put(api, scope_id, "c", content="other")

    body = api.get(f"/v1/scopes/{scope_id}/source-attempts/content/c").json()

    assert [(a["outcome"], a["reason"]) for a in body["items"]] == [
        ("accepted", None),
        ("replayed", None),
        ("conflict", "source_conflict"),
    ]
    assert body["next_cursor"] is None


def test_audit_keeps_the_last_20_attempts_and_the_total(
    api: ApiClient, scope_id: str
) -> None:
    for _ in range(25):
        put(api, scope_id, "c")

    record = api.get(f"/v1/scopes/{scope_id}/source-audit/content/c").json()

    assert record["attempts_total"] == 25
    assert len(record["attempts"]) == 20
    assert [a["outcome"] for a in record["attempts"]] == ["replayed"] * 20
    all_attempts = api.get(
        f"/v1/scopes/{scope_id}/source-attempts/content/c", query={"limit": 100}
    ).json()["items"]
    assert record["attempts"] == all_attempts[-20:]


def test_attempts_of_a_rejected_identity_that_never_became_a_source(
    api: ApiClient, scope_id: str, clock: Any
) -> None:
    put_note(api, scope_id, "late", expires_at="2000-01-01T00:00:00Z")

    attempts = api.get(f"/v1/scopes/{scope_id}/source-attempts/content/late")
    detail = api.get(f"/v1/scopes/{scope_id}/source-audit/content/late")

    assert [(a["outcome"], a["reason"]) for a in attempts.json()["items"]] == [
        ("rejected", "not_in_future")
    ]
    assert error_of(detail)["code"] == "source_not_found"


def test_attempts_of_an_unknown_identity_is_404(api: ApiClient, scope_id: str) -> None:
    response = api.get(f"/v1/scopes/{scope_id}/source-attempts/content/nothing")

    assert error_of(response)["code"] == "source_not_found"


def test_attempts_pages(api: ApiClient, scope_id: str) -> None:
    for _ in range(5):
        put(api, scope_id, "c")

    first = api.get(
        f"/v1/scopes/{scope_id}/source-attempts/content/c", query={"limit": 3}
    ).json()
    second = api.get(
        f"/v1/scopes/{scope_id}/source-attempts/content/c",
        query={"limit": 3, "cursor": first["next_cursor"]},
    ).json()

    assert len(first["items"]) == 3
    assert len(second["items"]) == 2
    assert second["next_cursor"] is None


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ({"limit": "0"}, 400),
        ({"limit": "101"}, 400),
        ({"working_note": "maybe"}, 400),
        ({"state": "deleted"}, 400),
        ({"note_kind": "nope"}, 400),
        ({"after_position": "-1"}, 400),
        ({"bogus": "1"}, 422),
    ],
)
def test_audit_query_errors(
    api: ApiClient, scope_id: str, query: dict, status: int
) -> None:
    assert audit(api, scope_id, **query).status_code == status


@pytest.mark.parametrize(
    "path",
    [
        "/v1/scopes/{scope}/source-audit",
        "/v1/scopes/{scope}/source-audit/content/plain",
        "/v1/scopes/{scope}/source-attempts/content/plain",
    ],
)
def test_audit_needs_a_grant_on_the_scope(
    api: ApiClient,
    client_for: Callable[..., ApiClient],
    populated: str,
    path: str,
) -> None:
    url = path.format(scope=populated)

    assert client_for("scp_elsewhere:admin").get(url).status_code == 403
    assert client_for(f"{populated}:viewer").get(url).status_code == 200


def test_audit_of_unknown_scope_is_404(api: ApiClient) -> None:
    assert error_of(audit(api, "scp_nope"))["code"] == "scope_not_found"


def test_audit_page_costs_a_constant_number_of_statements(
    api: ApiClient, scope_id: str, assert_max_statements: Callable[[int], Any]
) -> None:
    for i in range(30):
        put(api, scope_id, f"s{i}")
        put(api, scope_id, f"s{i}")

    with assert_max_statements(6):
        body = audit(api, scope_id, limit=30).json()

    assert all(item["attempts_total"] == 2 for item in body["items"])
