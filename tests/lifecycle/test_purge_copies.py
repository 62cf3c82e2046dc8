"""No copy of a purged note survives: the same text kept as
working notes by any envelope of its scope - live or in a revision, open session
or closed - is erased with it, and a held envelope's copy keeps the note whole
(item 4)."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.core.management import call_command

from sessions_app.models import EnvelopeRevision
from sessions_app.selectors import ERASED, revision_meta
from tests.conftest import ApiClient
from tests.lifecycle.helpers import audit, hold, purge, release, tables_holding

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
TEXT = "the bridged note: deploy key rotated, old one in vault path secret/x"
REVISIONS = "/admin/sessions_app/enveloperevision/"


def _notes(scope_id: str, session_id: str) -> str:
    return f"/v1/scopes/{scope_id}/sessions/{session_id}/working-notes"


def _bridge(api: ApiClient, scope_id: str, session_id: str = "s-open") -> None:
    """Notes TEXT in an open session, captured as note wn-1 expiring in an hour."""
    capture = {"source_id": "wn-1", "expires_at": (T0 + timedelta(hours=1)).isoformat()}
    response = api.put(
        _notes(scope_id, session_id), {"notes": TEXT, "capture": capture}
    )
    assert response.status_code == 201, response.content


@pytest.fixture
def later(api: ApiClient, scope_id: str) -> Any:
    """The bridged note, a later notes write, and the clock two days on."""
    with time_machine.travel(T0, tick=False) as clock:
        _bridge(api, scope_id)
        yield clock


def test_a_purged_bridged_note_leaves_no_copy_in_an_open_sessions_envelope(
    api: ApiClient, scope_id: str, later: Any, admin_client: Any
) -> None:
    api.patch(
        f"/v1/scopes/{scope_id}/sessions/s-open/envelope", {"meta": {"cwd": "/src"}}
    )
    later.move_to(T0 + timedelta(days=2))

    result = purge(api, scope_id, older_than_seconds=86400).json()

    assert (result["purged"], result["skipped_held"]) == (1, 0)
    assert audit(api, scope_id, "wn-1")["state"] == "purged"
    envelope = api.get(f"/v1/scopes/{scope_id}/sessions/s-open/envelope").json()
    assert (envelope["version"], envelope["meta"]) == (3, {"cwd": "/src"})
    assert [
        revision_meta(revision)
        for revision in EnvelopeRevision.objects.order_by("version")
    ] == [
        {"workingNotes": ERASED},
        {"workingNotes": ERASED, "cwd": "/src"},
        {"cwd": "/src"},
    ]
    first = EnvelopeRevision.objects.get(version=1)
    page = admin_client.get(f"{REVISIONS}{first.pk}/change/").content.decode()
    assert ERASED in page
    assert TEXT not in page
    assert tables_holding(TEXT) == []


def test_a_purge_erases_the_same_text_in_another_sessions_revisions(
    api: ApiClient, scope_id: str, later: Any
) -> None:
    api.put(_notes(scope_id, "s-other"), {"notes": TEXT})
    api.put(_notes(scope_id, "s-other"), {"notes": "newer notes"})
    later.move_to(T0 + timedelta(days=2))

    assert purge(api, scope_id, older_than_seconds=86400).json()["purged"] == 1

    assert api.get(_notes(scope_id, "s-other")).json()["notes"] == "newer notes"
    assert tables_holding(TEXT) == []


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_held_envelope_copy_keeps_the_note_whole(
    api: ApiClient, scope_id: str, later: Any, dry_run: bool
) -> None:
    api.put(_notes(scope_id, "s-held"), {"notes": TEXT})
    hold_id = hold(api, scope_id, "s-held").json()["hold_id"]
    later.move_to(T0 + timedelta(days=2))

    result = purge(api, scope_id, older_than_seconds=86400, dry_run=dry_run).json()

    assert (result["purged"], result["skipped_held"]) == (0, 1)
    assert audit(api, scope_id, "wn-1")["state"] == "expired"
    for session_id in ("s-open", "s-held"):
        assert api.get(_notes(scope_id, session_id)).json()["notes"] == TEXT

    release(api, scope_id, hold_id)
    after_release = purge(api, scope_id, older_than_seconds=86400).json()
    assert (after_release["purged"], after_release["skipped_held"]) == (1, 0)
    assert tables_holding(TEXT) == []


def test_the_command_skips_a_note_a_held_envelope_keeps(
    api: ApiClient, scope_id: str, later: Any
) -> None:
    api.put(_notes(scope_id, "s-held"), {"notes": TEXT})
    hold(api, scope_id, "s-held")
    later.move_to(T0 + timedelta(days=2))
    out = io.StringIO()

    call_command("purge_working_notes", "--older-than", "1d", stdout=out)

    assert "purged 0 notes, skipped 1 held" in out.getvalue()
    assert audit(api, scope_id, "wn-1")["state"] == "expired"
    assert api.get(_notes(scope_id, "s-held")).json()["notes"] == TEXT
