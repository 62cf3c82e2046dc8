"""Legal holds (spec/handoff.md 3): set, release, list, stacking."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
import time_machine

from lifecycle.models import LegalHold, LegalHoldRelease
from tests.conftest import ApiClient, error_of
from tests.lifecycle.helpers import hold, note, redact, release

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def test_set_answers_201_with_the_hold(api: ApiClient, scope_id: str) -> None:
    with time_machine.travel(NOW, tick=False):
        response = hold(api, scope_id, "sess-1", reason="litigation 42")

    assert response.status_code == 201
    body = response.json()
    assert body == {
        "hold_id": body["hold_id"],
        "scope_id": scope_id,
        "session_id": "sess-1",
        "reason": "litigation 42",
        "set_by": "root",
        "set_at": "2026-06-01T12:00:00Z",
        "released_at": None,
        "released_by": None,
    }
    assert LegalHold.objects.get(hold_id=body["hold_id"]).reason == "litigation 42"


def test_session_id_may_be_omitted_for_a_scope_hold(
    api: ApiClient, scope_id: str
) -> None:
    response = api.post(f"/v1/scopes/{scope_id}/legal-holds", {"reason": "all"})

    assert (response.status_code, response.json()["session_id"]) == (201, None)


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"reason": ""},
        {"reason": "   "},
        {"reason": "x" * 2001},
        {"reason": 5},
        {"reason": "r", "session_id": ""},
        {"reason": "r", "extra": 1},
    ],
)
def test_bad_holds_are_422(api: ApiClient, scope_id: str, body: Any) -> None:
    response = api.post(f"/v1/scopes/{scope_id}/legal-holds", body)

    assert response.status_code == 422
    assert LegalHold.objects.count() == 0


def test_release_records_who_and_when_and_a_second_release_changes_nothing(
    api: ApiClient, scope_id: str
) -> None:
    hold_id = hold(api, scope_id).json()["hold_id"]
    with time_machine.travel(NOW, tick=False):
        first = release(api, scope_id, hold_id, reason="case closed")
    second = release(api, scope_id, hold_id, reason="again")

    assert first.status_code == 200
    assert (first.json()["released_at"], first.json()["released_by"]) == (
        "2026-06-01T12:00:00Z",
        "root",
    )
    assert second.json() == first.json()
    assert list(LegalHoldRelease.objects.values_list("reason", flat=True)) == [
        "case closed"
    ]


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("/v1/scopes/{scope}/legal-holds/hold_nope/release", "legal_hold_not_found"),
        ("/v1/scopes/nope/legal-holds/hold_nope/release", "scope_not_found"),
        ("/v1/scopes/nope/legal-holds", "scope_not_found"),
    ],
)
def test_unknown_holds_and_scopes_are_404(
    api: ApiClient, scope_id: str, path: str, code: str
) -> None:
    response = api.post(path.format(scope=scope_id), {"reason": "r"})

    assert response.status_code == 404
    assert error_of(response)["code"] == code


def test_a_hold_of_another_scope_is_not_found(api: ApiClient, scope_id: str) -> None:
    from tests.conftest import create_scope

    other = create_scope(api, key="other")
    hold_id = hold(api, other).json()["hold_id"]

    assert release(api, scope_id, hold_id).status_code == 404


def test_list_is_newest_first_with_cursors(api: ApiClient, scope_id: str) -> None:
    ids = [hold(api, scope_id, reason=f"r{i}").json()["hold_id"] for i in range(3)]
    release(api, scope_id, ids[0])

    first = api.get(f"/v1/scopes/{scope_id}/legal-holds", query={"limit": "2"}).json()
    rest = api.get(
        f"/v1/scopes/{scope_id}/legal-holds",
        query={"limit": "2", "cursor": first["next_cursor"]},
    ).json()

    assert [item["hold_id"] for item in first["items"]] == [ids[2], ids[1]]
    assert [item["hold_id"] for item in rest["items"]] == [ids[0]]
    assert rest["items"][0]["released_by"] == "root"
    assert rest["next_cursor"] is None


def test_list_of_an_unknown_scope_is_404(api: ApiClient) -> None:
    assert api.get("/v1/scopes/nope/legal-holds").status_code == 404


@pytest.mark.parametrize("session_id", [None, "sess-1"])
def test_stacked_holds_each_block_until_released(
    api: ApiClient, scope_id: str, session_id: str | None
) -> None:
    note(api, scope_id, "n-1")
    first = hold(api, scope_id, session_id).json()["hold_id"]
    second = hold(api, scope_id, "sess-1").json()["hold_id"]

    blocked = redact(api, scope_id, "n-1")
    release(api, scope_id, first)
    still_blocked = redact(api, scope_id, "n-1")
    release(api, scope_id, second)
    allowed = redact(api, scope_id, "n-1")

    assert [blocked.status_code, still_blocked.status_code] == [409, 409]
    assert error_of(blocked)["code"] == "legal_hold"
    assert allowed.status_code == 200


def test_a_hold_on_another_session_does_not_block(
    api: ApiClient, scope_id: str
) -> None:
    note(api, scope_id, "n-1")
    hold(api, scope_id, "sess-2")

    assert redact(api, scope_id, "n-1").status_code == 200
