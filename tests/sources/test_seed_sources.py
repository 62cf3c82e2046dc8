"""``manage.py seed_sources``: seeded rows are indistinguishable from captured ones."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from sources.models import CaptureAttempt, ContentSource, Scope, SourceJournalHead
from tests.conftest import ApiClient, error_of

pytestmark = pytest.mark.django_db


def seed(*args: str) -> str:
    out = io.StringIO()
    call_command(
        "seed_sources", *args, "--no-progress", stdout=out, stderr=io.StringIO()
    )
    return out.getvalue().strip().splitlines()[-1]


def capture_note(
    api: ApiClient, scope_id: str, source_id: str, **fields: str
) -> object:
    body = {
        "scope_id": scope_id,
        "source_id": source_id,
        "content": "captured first",
        "session_id": "sess-1",
        "note_kind": "inspection",
        **fields,
    }
    return api.post("/v1/sources/working-notes", body)


def test_seeding_continues_the_journal_without_gaps(
    api: ApiClient, scope_id: str
) -> None:
    assert capture_note(api, scope_id, "before").status_code == 202

    seed("30", "--scope", scope_id, "--prefix", "s-", "--batch", "7")

    positions = list(
        ContentSource.objects.filter(scope_id=scope_id)
        .order_by("position")
        .values_list("position", flat=True)
    )
    assert positions == list(range(1, 32))
    assert SourceJournalHead.objects.get(scope_id=scope_id).last_position == 31
    seeded = ContentSource.objects.filter(scope_id=scope_id, source_id__startswith="s-")
    assert seeded.filter(is_working_note=True).count() == 7  # every 4th of 30
    assert (
        CaptureAttempt.objects.filter(
            scope_id=scope_id, source_id__startswith="s-", outcome="accepted"
        ).count()
        == 30
    )
    assert capture_note(api, scope_id, "after").json()["position"] == 32


def test_seeded_note_replays_and_conflicts_like_a_captured_one(
    api: ApiClient, scope_id: str
) -> None:
    seed("8", "--scope", scope_id, "--prefix", "s-")
    stored = ContentSource.objects.get(scope_id=scope_id, source_id="s-4")
    body = {
        "content": (
            "Seeded note 4: inspected the module behind it; the cache is "
            "rebuilt on every call, which explains the slow first page."
        ),
        "session_id": stored.session_id,
        "note_kind": stored.note_kind,
    }

    replay = capture_note(api, scope_id, "s-4", **body)
    conflict = capture_note(api, scope_id, "s-4", **{**body, "content": "other"})

    assert replay.status_code == 202
    assert replay.json()["position"] == stored.position
    assert replay["Idempotent-Replayed"] == "true"
    assert conflict.status_code == 409
    assert error_of(conflict)["code"] == "source_conflict"


def test_seeded_plain_source_replays_with_its_metadata(
    api: ApiClient, scope_id: str
) -> None:
    seed("3", "--scope", scope_id, "--prefix", "s-", "--notes", "0")
    content = (
        "Seeded source 2: design notes for the journal, positions are "
        "handed out by the head row of the scope in the capture transaction."
    )

    response = api.post(
        "/v1/sources/content",
        {
            "scope_id": scope_id,
            "source_id": "s-2",
            "content": content,
            "metadata": {"n": 2.0, "origin": "seed"},  # 2.0 == 2 canonically
        },
    )

    assert response.status_code == 202
    assert response.json()["position"] == 2
    assert response["Idempotent-Replayed"] == "true"


def test_create_scope_prints_the_new_scope_id(db: None) -> None:
    scope_id = seed("5", "--create-scope", "Seeded")

    assert Scope.objects.get(scope_id=scope_id).title == "Seeded"
    assert ContentSource.objects.filter(scope_id=scope_id).count() == 5


def test_unknown_scope_is_refused(db: None) -> None:
    with pytest.raises(CommandError, match="No scope"):
        seed("5", "--scope", "scp_missing")
