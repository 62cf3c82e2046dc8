"""Purge erases the working notes of envelopes of sessions closed longer ago than
the age, and their copies in revisions, unless held; the command's interface."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.core.management import CommandError, call_command

from sessions_app.models import EnvelopeRevision, EnvelopeValue
from sessions_app.selectors import ERASED, revision_meta
from tests.conftest import ApiClient
from tests.lifecycle.helpers import close, hold, purge

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
NOTES = "the notes of sess-1, v2"


def notes_of(session_id: str) -> str:
    """Each session's own notes text: a purged note's text is erased from every
    envelope that keeps it (test_purge_copies.py), so sessions do not share it."""
    return NOTES.replace("sess-1", session_id)


def _notes(scope_id: str, session_id: str) -> str:
    return f"/v1/scopes/{scope_id}/sessions/{session_id}/working-notes"


@pytest.fixture
def closed_sessions(api: ApiClient, scope_id: str) -> Any:
    with time_machine.travel(T0, tick=False) as clock:
        for session_id in ("sess-1", "sess-held"):
            api.put(_notes(scope_id, session_id), {"notes": "first notes"})
            api.put(
                _notes(scope_id, session_id),
                {
                    "notes": notes_of(session_id),
                    "capture": {"source_id": f"wn-{session_id}"},
                },
            )
            api.patch(
                f"/v1/scopes/{scope_id}/sessions/{session_id}/envelope",
                {"meta": {"cwd": "/src"}},
            )
            close(api, scope_id, session_id)
        api.put(_notes(scope_id, "open"), {"notes": notes_of("open")})
        hold(api, scope_id, "sess-held")
        clock.move_to(T0 + timedelta(days=2))
        yield clock


def _values_of(scope_id: str, session_id: str) -> list[Any]:
    return list(
        EnvelopeValue.objects.filter(
            envelope__scope_id=scope_id, envelope__session_id=session_id
        ).values_list("value", flat=True)
    )


def test_purge_erases_notes_of_closed_unheld_sessions_everywhere(
    api: ApiClient, scope_id: str, closed_sessions: Any
) -> None:
    response = purge(api, scope_id, older_than_seconds=86400)

    assert response.json()["envelopes_cleared"] == 1
    envelope = api.get(f"/v1/scopes/{scope_id}/sessions/sess-1/envelope").json()
    assert "workingNotes" not in envelope["meta"]
    assert envelope["meta"]["cwd"] == "/src"
    assert _values_of(scope_id, "sess-1") == []
    revisions = EnvelopeRevision.objects.filter(envelope__session_id="sess-1")
    assert [
        revision_meta(r).get("workingNotes") for r in revisions.order_by("version")
    ] == [
        ERASED,
        ERASED,
        ERASED,
        None,
    ]
    assert (
        api.get(f"/v1/scopes/{scope_id}/sources/content/wn-sess-1").json()["content"]
        is None
    )


def test_held_and_open_sessions_keep_their_notes(
    api: ApiClient, scope_id: str, closed_sessions: Any
) -> None:
    purge(api, scope_id, older_than_seconds=86400)

    assert api.get(_notes(scope_id, "sess-held")).json()["notes"] == notes_of(
        "sess-held"
    )
    assert api.get(_notes(scope_id, "open")).json()["notes"] == notes_of("open")
    assert sorted(_values_of(scope_id, "sess-held")) == [
        "first notes",
        notes_of("sess-held"),
    ]


def test_sessions_closed_more_recently_than_the_age_keep_their_notes(
    api: ApiClient, scope_id: str, closed_sessions: Any
) -> None:
    response = purge(api, scope_id, older_than_seconds=3 * 86400)

    assert response.json()["envelopes_cleared"] == 0
    assert api.get(_notes(scope_id, "sess-1")).json()["notes"] == NOTES


def test_a_dry_run_counts_envelopes_and_keeps_them(
    api: ApiClient, scope_id: str, closed_sessions: Any
) -> None:
    response = purge(api, scope_id, older_than_seconds=86400, dry_run=True)

    assert response.json()["envelopes_cleared"] == 1
    assert api.get(_notes(scope_id, "sess-1")).json()["notes"] == NOTES


def test_the_command_purges_every_scope_and_prints_a_summary(
    api: ApiClient, scope_id: str, closed_sessions: Any
) -> None:
    out = io.StringIO()

    call_command("purge_working_notes", "--older-than", "1d", stdout=out)

    assert "purged 1 notes, skipped 1 held and 0 cited" in out.getvalue()
    assert "envelopes cleared: 1" in out.getvalue()
    assert api.get(_notes(scope_id, "sess-1")).json()["notes"] is None


def test_the_command_dry_run_says_would(
    api: ApiClient, scope_id: str, closed_sessions: Any
) -> None:
    out = io.StringIO()

    call_command("purge_working_notes", "--older-than", "36h", "--dry-run", stdout=out)

    assert "would purge 1 notes" in out.getvalue()
    assert api.get(_notes(scope_id, "sess-1")).json()["notes"] == NOTES


@pytest.mark.parametrize(
    "arguments",
    [
        ["--older-than", "30"],
        ["--older-than", "30w"],
        ["--older-than", "-1d"],
        ["--older-than", "٣d"],
        ["--older-than", "99999999d"],
        ["--older-than", "1d", "--scope", "nope"],
        [],
    ],
)
def test_the_command_refuses_bad_arguments(arguments: list[str]) -> None:
    with pytest.raises(CommandError):
        call_command("purge_working_notes", *arguments)
