"""Notes as evidence (sessions.md 2.1): a notes PUT that also captures the notes as
a Source-backed Working Note, in the same transaction."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

import pytest
import time_machine

from sessions_app.models import EnvelopeRevision, SessionEnvelope
from sessions_app.selectors import revision_meta
from sources.models import CaptureAttempt, ContentSource
from tests.conftest import ApiClient, error_of
from tests.sessions_app.conftest import envelope_row, revision_versions, session_path

pytestmark = pytest.mark.django_db


def notes_path(scope_id: str, session_id: str = "sess-7") -> str:
    return session_path(scope_id, session_id, "working-notes")


def attempts_of(scope_id: str, source_id: str) -> list[tuple[str, str | None]]:
    return list(
        CaptureAttempt.objects.filter(scope_id=scope_id, source_id=source_id)
        .order_by("id")
        .values_list("outcome", "reason")
    )


def receipt(source_id: str, position: int) -> dict[str, Any]:
    return {
        "status": "accepted",
        "source": {"name": "content", "source_id": source_id},
        "position": position,
    }


def test_capture_stores_the_notes_as_a_working_note(
    api: ApiClient, scope_id: str
) -> None:
    response = api.put(
        notes_path(scope_id), {"notes": "  Parser fixed in abc123.\n", "capture": {}}
    )

    assert response.status_code == 201
    body = response.json()
    assert body["source"] == receipt("session-notes:sess-7:v1", 1)
    assert (body["notes"], body["version"]) == ("Parser fixed in abc123.", 1)
    row = ContentSource.objects.get()
    assert (row.is_working_note, row.session_id, row.note_kind, row.expires_at) == (
        True,
        "sess-7",
        "host_context",
        None,
    )
    assert json.loads(row.content) == "Parser fixed in abc123."
    record = api.get(
        f"/v1/scopes/{scope_id}/sources/content/session-notes:sess-7:v1"
    ).json()
    assert record["content"] == "Parser fixed in abc123."


def test_the_cited_revision_holds_exactly_the_captured_text(
    api: ApiClient, scope_id: str
) -> None:
    api.patch(session_path(scope_id), {"meta": {"cwd": "/w"}})

    response = api.put(notes_path(scope_id), {"notes": "finding", "capture": {}})

    assert response.json()["source"]["source"]["source_id"] == "session-notes:sess-7:v2"
    revision = EnvelopeRevision.objects.get(version=2)
    captured = json.loads(ContentSource.objects.get().content)
    assert revision_meta(revision)["workingNotes"] == captured == "finding"


def test_capture_takes_the_kind_expiry_and_id_it_is_given(
    api: ApiClient, scope_id: str
) -> None:
    with time_machine.travel(datetime(2026, 6, 1, tzinfo=UTC), tick=False):
        response = api.put(
            notes_path(scope_id),
            {
                "notes": "n",
                "capture": {
                    "note_kind": "validation",
                    "expires_at": "2026-07-01T08:00:00+08:00",
                    "source_id": "my-note",
                },
            },
        )

    assert response.json()["source"] == receipt("my-note", 1)
    row = ContentSource.objects.get()
    assert (row.source_id, row.note_kind, row.expires_at) == (
        "my-note",
        "validation",
        datetime(2026, 7, 1, tzinfo=UTC),
    )


def test_replaying_the_same_put_replays_the_capture(
    api: ApiClient, scope_id: str
) -> None:
    body = {"notes": "same notes", "capture": {"note_kind": "inspection"}}
    first = api.put(notes_path(scope_id), body)

    second = api.put(notes_path(scope_id), body)

    assert (first.status_code, second.status_code) == (201, 200)
    assert second.json() == first.json()
    assert revision_versions(scope_id) == [1]
    assert ContentSource.objects.count() == 1
    assert list(
        CaptureAttempt.objects.order_by("id").values_list("outcome", flat=True)
    ) == [
        "accepted",
        "replayed",
    ]


def test_a_replay_after_other_writes_still_cites_the_version_of_the_notes(
    api: ApiClient, scope_id: str
) -> None:
    body = {"notes": "same notes", "capture": {}}
    first = api.put(notes_path(scope_id), body)
    api.patch(session_path(scope_id), {"meta": {"turnStatus": "running"}})
    api.put(session_path(scope_id), {"meta": {"personaId": "p"}})

    again = api.put(notes_path(scope_id), body)

    assert again.json()["source"] == first.json()["source"]
    assert again.json()["version"] == 3
    assert ContentSource.objects.count() == 1


def test_new_notes_are_captured_under_their_own_version(
    api: ApiClient, scope_id: str
) -> None:
    api.put(notes_path(scope_id), {"notes": "one", "capture": {}})
    api.put(notes_path(scope_id), {"notes": "two"})

    response = api.put(notes_path(scope_id), {"notes": "three", "capture": {}})

    assert response.json()["source"] == receipt("session-notes:sess-7:v3", 2)
    assert list(
        ContentSource.objects.order_by("position").values_list("source_id", flat=True)
    ) == ["session-notes:sess-7:v1", "session-notes:sess-7:v3"]


@pytest.mark.parametrize(
    ("session_id", "expected"),
    [
        pytest.param("s" * 230, "session-notes:" + "s" * 230 + ":v1", id="fits"),
        pytest.param(
            "s" * 256,
            "session-notes:sha256:"
            + hashlib.sha256(("s" * 256).encode()).hexdigest()[:32]
            + ":v1",
            id="too-long",
        ),
        pytest.param(
            "é" * 240,
            "session-notes:sha256:"
            + hashlib.sha256(("é" * 240).encode("utf-8")).hexdigest()[:32]
            + ":v1",
            id="too-long-multibyte",
        ),
    ],
)
def test_default_source_id_hashes_a_session_id_that_would_not_fit(
    api: ApiClient, scope_id: str, session_id: str, expected: str
) -> None:
    response = api.put(notes_path(scope_id, session_id), {"notes": "n", "capture": {}})

    assert response.json()["source"]["source"]["source_id"] == expected
    assert ContentSource.objects.get().session_id == session_id


@pytest.mark.parametrize("notes", ["", "  \n "])
def test_capture_of_empty_notes_is_422_and_stores_nothing(
    api: ApiClient, scope_id: str, notes: str
) -> None:
    api.put(notes_path(scope_id), {"notes": "keep"})

    response = api.put(notes_path(scope_id), {"notes": notes, "capture": {}})

    assert response.status_code == 422
    assert error_of(response)["details"] == {"field": "notes", "reason": "empty"}
    assert envelope_row(scope_id).meta == {"workingNotes": "keep"}
    assert not ContentSource.objects.exists()


def test_a_conflicting_capture_is_409_and_the_notes_are_not_written(
    api: ApiClient, scope_id: str
) -> None:
    api.post(
        "/v1/sources/content",
        {"scope_id": scope_id, "source_id": "taken", "content": "other text"},
    )
    api.put(notes_path(scope_id), {"notes": "before"})

    response = api.put(
        notes_path(scope_id),
        {"notes": "after", "capture": {"source_id": "taken"}},
    )

    assert response.status_code == 409
    assert error_of(response)["code"] == "source_conflict"
    assert envelope_row(scope_id).meta == {"workingNotes": "before"}
    assert revision_versions(scope_id) == [1]
    assert ContentSource.objects.count() == 1
    assert attempts_of(scope_id, "taken") == [
        ("accepted", None),
        ("conflict", "source_conflict"),
    ]


def test_an_expired_capture_is_422_not_in_future_and_creates_nothing(
    api: ApiClient, scope_id: str
) -> None:
    with time_machine.travel(datetime(2026, 6, 1, tzinfo=UTC), tick=False):
        response = api.put(
            notes_path(scope_id),
            {"notes": "n", "capture": {"expires_at": "2026-06-01T00:00:00Z"}},
        )

    assert response.status_code == 422
    assert error_of(response)["details"] == {
        "field": "expires_at",
        "reason": "not_in_future",
    }
    assert not SessionEnvelope.objects.exists()
    assert not ContentSource.objects.exists()
    assert attempts_of(scope_id, "session-notes:sess-7:v1") == [
        ("rejected", "not_in_future")
    ]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_attempts_of_a_rolled_back_bridge_survive_the_rollback(
    api: ApiClient, scope_id: str
) -> None:
    """With real transactions: the 409 rolls the notes back, not its attempt row."""
    api.post(
        "/v1/sources/content",
        {"scope_id": scope_id, "source_id": "taken", "content": "other text"},
    )

    response = api.put(
        notes_path(scope_id), {"notes": "n", "capture": {"source_id": "taken"}}
    )
    expired = api.put(
        notes_path(scope_id),
        {"notes": "m", "capture": {"expires_at": "2020-01-01T00:00:00Z"}},
    )

    assert (response.status_code, expired.status_code) == (409, 422)
    assert not SessionEnvelope.objects.exists()
    assert attempts_of(scope_id, "taken")[-1] == ("conflict", "source_conflict")
    assert attempts_of(scope_id, "session-notes:sess-7:v1") == [
        ("rejected", "not_in_future")
    ]


def test_notes_over_the_cap_are_not_captured(api: ApiClient, scope_id: str) -> None:
    response = api.put(notes_path(scope_id), {"notes": "a" * 32769, "capture": {}})

    assert error_of(response)["code"] == "working_notes_too_large"
    assert not ContentSource.objects.exists()


@pytest.mark.parametrize("body", [{"notes": "n"}, {"notes": "n", "capture": None}])
def test_without_capture_the_source_is_null(
    api: ApiClient, scope_id: str, body: dict
) -> None:
    response = api.put(notes_path(scope_id), body)

    assert response.json()["source"] is None
    assert not ContentSource.objects.exists()


@pytest.mark.parametrize(
    ("capture", "loc", "type_"),
    [
        (5, ["body", "capture"], "dict_type"),
        ({"note_kind": "Inspection"}, ["body", "capture", "note_kind"], "enum"),
        ({"note_kind": 1}, ["body", "capture", "note_kind"], "string_type"),
        ({"source_id": " id"}, ["body", "capture", "source_id"], "padded"),
        ({"source_id": ""}, ["body", "capture", "source_id"], "string_too_short"),
        ({"source_id": "s" * 257}, ["body", "capture", "source_id"], "string_too_long"),
        (
            {"expires_at": "2030-01-01T00:00:00"},
            ["body", "capture", "expires_at"],
            "timezone_aware",
        ),
        (
            {"expires_at": 1893456000},
            ["body", "capture", "expires_at"],
            "datetime_type",
        ),
        ({"metadata": {}}, ["body", "capture", "metadata"], "extra_forbidden"),
    ],
)
def test_capture_schema_errors(
    api: ApiClient, scope_id: str, capture: Any, loc: list, type_: str
) -> None:
    response = api.put(notes_path(scope_id), {"notes": "n", "capture": capture})

    assert response.status_code == 422
    errors = error_of(response)["details"]["errors"]
    assert {"loc": loc, "type": type_} in [
        {"loc": e["loc"], "type": e["type"]} for e in errors
    ]
    assert not SessionEnvelope.objects.exists()
