"""Session close (spec/handoff.md 3) through the HTTP API."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine

from sources.models import CaptureAttempt, SessionClosure
from tests.conftest import ApiClient, error_of
from tests.lifecycle.helpers import audit, close, note, note_body, resolve, source

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def test_close_is_201_then_200_with_the_same_record(
    api: ApiClient, scope_id: str
) -> None:
    with time_machine.travel(NOW, tick=False):
        first = close(api, scope_id)
    second = close(api, scope_id)

    assert first.status_code == 201
    assert first.json() == {
        "scope_id": scope_id,
        "session_id": "sess-1",
        "closed_at": "2026-06-01T12:00:00Z",
        "closed_by": "root",
    }
    assert (second.status_code, second.json()) == (200, first.json())
    assert SessionClosure.objects.filter(scope_id=scope_id).count() == 1


def test_a_session_id_with_a_slash_closes_that_session(
    api: ApiClient, scope_id: str
) -> None:
    response = close(api, scope_id, "a/b")

    assert response.status_code == 201
    assert response.json()["session_id"] == "a/b"


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/v1/scopes/nope/sessions/s/close", {}, 404),
        ("{scope}/sessions/s/close", {"reason": "x"}, 422),
        ("{scope}/sessions/s/close", [], 422),
    ],
)
def test_bad_closes(
    api: ApiClient, scope_id: str, path: str, body: Any, status: int
) -> None:
    response = api.post(path.format(scope=f"/v1/scopes/{scope_id}"), body)

    assert response.status_code == status
    assert SessionClosure.objects.count() == 0


def test_after_close_new_notes_are_409_but_existing_identities_keep_their_rules(
    api: ApiClient, scope_id: str
) -> None:
    original = note(api, scope_id, "n-1")
    close(api, scope_id)

    new = note(api, scope_id, "n-2")
    replay = note(api, scope_id, "n-1")
    conflict = note(api, scope_id, "n-1", content="other")
    other_session = note(api, scope_id, "n-3", session_id="sess-2")

    assert new.status_code == 409
    assert error_of(new)["code"] == "session_closed"
    assert (replay.status_code, replay.json()) == (202, original.json())
    assert replay["Idempotent-Replayed"] == "true"
    assert (conflict.status_code, error_of(conflict)["code"]) == (
        409,
        "source_conflict",
    )
    assert other_session.status_code == 202
    assert api.get(f"/v1/scopes/{scope_id}/sources/content/n-2").status_code == 404
    assert list(
        CaptureAttempt.objects.filter(source_id="n-2").values_list("outcome", "reason")
    ) == [("rejected", "session_closed")]


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("PUT", "envelope", {"meta": {"personaId": "q"}}),
        ("PATCH", "envelope", {"meta": {"cwd": "/"}}),
        ("PUT", "working-notes", {"notes": "more"}),
        ("PUT", "working-notes", {"notes": "more", "capture": {}}),
        ("DELETE", "working-notes", None),
    ],
)
def test_envelope_writes_after_close_are_409(
    api: ApiClient, scope_id: str, method: str, suffix: str, body: Any
) -> None:
    path = f"/v1/scopes/{scope_id}/sessions/sess-1/{suffix}"
    api.put(f"/v1/scopes/{scope_id}/sessions/sess-1/working-notes", {"notes": "n"})
    close(api, scope_id)
    before = api.get(f"/v1/scopes/{scope_id}/sessions/sess-1/envelope").json()

    response = api.request(method, path, body)

    assert response.status_code == 409
    assert error_of(response)["code"] == "session_closed"
    after = api.get(f"/v1/scopes/{scope_id}/sessions/sess-1/envelope").json()
    assert after == before


def test_an_envelope_write_to_a_closed_session_without_envelope_is_409(
    api: ApiClient, scope_id: str
) -> None:
    close(api, scope_id, "fresh")

    response = api.put(
        f"/v1/scopes/{scope_id}/sessions/fresh/envelope", {"meta": {"cwd": "/"}}
    )

    assert response.status_code == 409
    assert error_of(response)["code"] == "session_closed"


def test_closed_notes_are_unavailable_with_reason_closed_rows_still_readable(
    api: ApiClient, scope_id: str
) -> None:
    later = NOW + timedelta(hours=1)
    with time_machine.travel(NOW, tick=False):
        note(api, scope_id, "open-note", session_id="sess-2")
        note(api, scope_id, "closed-note")
        note(api, scope_id, "closed-and-expired", expires_at=later)
        close(api, scope_id)
    with time_machine.travel(later + timedelta(minutes=1), tick=False):
        reasons = resolve(
            api, scope_id, "open-note", "closed-note", "closed-and-expired"
        )
        record = audit(api, scope_id, "closed-note")
        states = api.get(
            f"/v1/scopes/{scope_id}/source-audit", query={"state": "closed"}
        ).json()

    assert reasons == [None, "closed", "closed"]
    assert source(api, scope_id, "closed-note")["content"] == "a note"
    assert (record["state"], record["closed_at"]) == ("closed", "2026-06-01T12:00:00Z")
    assert [item["source_id"] for item in states["items"]] == [
        "closed-note",
        "closed-and-expired",
    ]


def test_generation_purpose_still_says_not_eligible_for_a_closed_note(
    api: ApiClient, scope_id: str
) -> None:
    note(api, scope_id, "n-1")
    close(api, scope_id)

    response = api.post(
        f"/v1/scopes/{scope_id}/evidence/resolve",
        {"purpose": "generation", "refs": [{"name": "content", "source_id": "n-1"}]},
    )

    assert response.json()["items"][0]["reason"] == "not_eligible"


def test_a_note_captured_before_close_replays_with_its_body(
    api: ApiClient, scope_id: str
) -> None:
    body = note_body(scope_id, "n-1")
    first = api.post("/v1/sources/working-notes", body)
    close(api, scope_id)

    assert api.post("/v1/sources/working-notes", body).json() == first.json()


def test_handoff_operations_treat_a_closed_note_as_unavailable(
    api: ApiClient, scope_id: str
) -> None:
    from tests.handoffs import helpers as handoff

    note(api, scope_id, "n-1")
    handoff.committed(api, scope_id, handoff.draft([handoff.sc("n-1")]))
    close(api, scope_id)

    finalized = handoff.finalize(api, scope_id, handoff.draft([handoff.sc("n-1")]))
    continued = handoff.select(api, handoff.CONTINUE, scope_id, "latest").json()
    hint = handoff.select(api, handoff.HINT, scope_id, "latest").json()
    body = handoff.draft([handoff.sc("n-1")], objective="again")
    committed = handoff.commit(api, scope_id, handoff.prepared(scope_id, body, base=1))

    assert error_of(finalized)["code"] == "handoff_evidence_not_found"
    assert error_of(committed)["code"] == "handoff_evidence_not_found"
    assert continued["evidence_checks"][0]["status"] == "unavailable"
    assert (hint["status"], hint["content"]) == ("empty", None)


def test_a_close_with_no_body_is_read_as_an_empty_object(
    api: ApiClient, scope_id: str
) -> None:
    """docs/api.md: an empty body is read as ``{}``."""
    response = api.post(f"/v1/scopes/{scope_id}/sessions/s/close", raw=b"")

    assert response.status_code == 201
    assert SessionClosure.objects.filter(scope_id=scope_id, session_id="s").exists()
