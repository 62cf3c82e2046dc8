"""Erasing a notes text (redaction, purge) deletes only what the notes used: a value
another key's revisions refer to, with the same bytes, keeps its value
(values are stored once per envelope, use and digest)."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.db import connection
from django.db.migrations.loader import MigrationLoader

from powercontext.canonical import canonical_sha256
from sessions_app.models import EnvelopeRevision, EnvelopeValue, SessionEnvelope
from sessions_app.selectors import ERASED, revision_meta
from tests.conftest import ApiClient
from tests.lifecycle.helpers import close, purge, redact

pytestmark = pytest.mark.django_db

TEXT = "a text both the notes and a host key hold, " + "long enough to be stored" * 4
OTHER = "a later host value, " + "long enough to be stored by reference" * 3
T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def _envelope(scope_id: str) -> str:
    return f"/v1/scopes/{scope_id}/sessions/sess-1/envelope"


def _notes(scope_id: str) -> str:
    return f"/v1/scopes/{scope_id}/sessions/sess-1/working-notes"


def _history(api: ApiClient, scope_id: str) -> None:
    """v1 host key = TEXT; v2 notes = TEXT (captured as wn-1); v3 host key changes."""
    assert api.put(_envelope(scope_id), {"meta": {"x-copy": TEXT}}).status_code == 201
    notes = {"notes": TEXT, "capture": {"source_id": "wn-1"}}
    assert api.put(_notes(scope_id), notes).status_code == 200
    assert api.put(_envelope(scope_id), {"meta": {"x-copy": OTHER}}).status_code == 200


def _revisions() -> list[dict]:
    return [
        revision_meta(revision)
        for revision in EnvelopeRevision.objects.order_by("version")
    ]


def test_a_redaction_keeps_the_value_another_keys_revisions_use(
    api: ApiClient, scope_id: str
) -> None:
    _history(api, scope_id)

    assert redact(api, scope_id, "wn-1").status_code == 200

    assert _revisions() == [
        {"x-copy": TEXT},
        {"x-copy": TEXT, "workingNotes": ERASED},
        {"x-copy": OTHER, "workingNotes": ERASED},
        {"x-copy": OTHER},
    ]
    assert api.get(_envelope(scope_id)).json()["meta"] == {"x-copy": OTHER}


def test_a_purge_of_a_closed_session_keeps_the_value_another_keys_revisions_use(
    api: ApiClient, scope_id: str
) -> None:
    with time_machine.travel(T0, tick=False) as clock:
        _history(api, scope_id)
        close(api, scope_id)
        clock.move_to(T0 + timedelta(days=2))

        assert purge(api, scope_id, older_than_seconds=86400).json()["purged"] == 1

    assert _revisions() == [
        {"x-copy": TEXT},
        {"x-copy": TEXT, "workingNotes": ERASED},
        {"x-copy": OTHER, "workingNotes": ERASED},
        {"x-copy": OTHER},
    ]


def test_the_next_write_after_an_erasure_still_finds_a_shared_live_value(
    api: ApiClient, scope_id: str
) -> None:
    api.put(_envelope(scope_id), {"meta": {"x-copy": TEXT}})
    api.put(_notes(scope_id), {"notes": TEXT, "capture": {"source_id": "wn-1"}})

    redact(api, scope_id, "wn-1")
    api.patch(_envelope(scope_id), {"meta": {"cwd": "/src"}})

    assert _revisions()[-1] == {"x-copy": TEXT, "cwd": "/src"}


def test_the_migration_gives_notes_their_own_values_and_keeps_shared_ones(
    api: ApiClient, scope_id: str
) -> None:
    """The data step of 0006 on rows as 0005 left them: one row per digest."""
    seen = [
        api.put(_envelope(scope_id), {"meta": {"x-a": TEXT}}).json()["meta"],
        api.patch(_envelope(scope_id), {"meta": {"workingNotes": TEXT}}).json()["meta"],
        api.patch(_envelope(scope_id), {"meta": {"workingNotes": OTHER}}).json()[
            "meta"
        ],
        api.put(_envelope(scope_id), {"meta": {"x-a": "h" * 80}}).json()["meta"],
    ]
    envelope = SessionEnvelope.objects.get()
    EnvelopeValue.objects.filter(for_notes=True).delete_pruned()
    EnvelopeValue.objects.create(
        envelope=envelope, digest=canonical_sha256(OTHER), value=OTHER
    )
    migration = importlib.import_module(
        "sessions_app.migrations.0006_envelope_value_use"
    )

    state = MigrationLoader(connection).project_state(
        ("sessions_app", "0006_envelope_value_use")
    )

    migration.split_notes_values(state.apps, None)

    assert sorted(EnvelopeValue.objects.values_list("for_notes", "value")) == sorted(
        [(False, TEXT), (True, TEXT), (True, OTHER), (False, "h" * 80)]
    )
    assert _revisions() == seen
