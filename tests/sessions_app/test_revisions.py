"""Revisions: one per accepted write, values stored once, retention pruning, and the
append-only guards (one test per layer, STYLE.md)."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from powercontext.db.immutable import ImmutableRecordError
from sessions_app.models import (
    EnvelopeRevision,
    EnvelopeValue,
    SessionEnvelope,
)
from sessions_app.selectors import revision_meta
from tests.conftest import ApiClient
from tests.sessions_app.conftest import revision_versions, session_path

pytestmark = pytest.mark.django_db

PERSONA = "You are a careful reviewer. " * 20000  # about 540 KB, over the default
START = datetime(2026, 1, 1, tzinfo=UTC)


def big(label: str) -> str:
    """A value too long to be copied into a revision (stored by reference)."""
    return label + "." * 100


def test_every_revision_rebuilds_the_meta_it_recorded(
    api: ApiClient, scope_id: str
) -> None:
    writes = [
        ("PUT", {"personaId": "p1", "x-n": 1}),
        ("PATCH", {"cwd": "/a", "turnCursor": 0}),
        ("PUT", {"personaId": "p2", "x-flag": True}),
        ("PATCH", {"cwd": None, "turnStatus": "idle"}),
    ]
    seen = []
    for method, meta in writes:
        seen.append(api.request(method, session_path(scope_id), {"meta": meta}).json())

    rebuilt = [
        revision_meta(revision)
        for revision in EnvelopeRevision.objects.order_by("version")
    ]
    assert rebuilt == [envelope["meta"] for envelope in seen]


def test_an_unchanged_large_value_is_stored_once(
    api: ApiClient, scope_id: str, settings: Any
) -> None:
    settings.PERSONA_SNAPSHOT_MAX_BYTES = 1024 * 1024
    api.put(session_path(scope_id), {"meta": {"personaSnapshot": PERSONA}})
    for cursor in range(5):
        api.patch(session_path(scope_id), {"meta": {"turnCursor": cursor}})
    api.put(
        session_path(scope_id),
        {"meta": {"personaSnapshot": PERSONA, "selectedModel": "m"}},
    )

    assert revision_versions(scope_id) == [1, 2, 3, 4, 5, 6, 7]
    assert list(EnvelopeValue.objects.values_list("value", flat=True)) == [PERSONA]
    assert revision_meta(EnvelopeRevision.objects.get(version=7)) == {
        "personaSnapshot": PERSONA,
        "selectedModel": "m",
        "turnCursor": 4,
    }


@pytest.mark.parametrize(
    ("key", "value", "by_reference"),
    [
        ("cwd", "/w", False),
        ("turnCursor", 12, False),
        ("cwd", "/" + "d" * 61, False),  # 64 bytes of JSON with its quotes
        ("cwd", "/" + "d" * 62, True),
        ("statusSlot", "é" * 31, False),  # 62 bytes of UTF-8 plus quotes
        ("statusSlot", "é" * 32, True),
        ("workingNotes", "ok", True),  # notes always: redaction reaches one row
    ],
)
def test_small_values_are_copied_and_the_rest_referenced(
    api: ApiClient, scope_id: str, key: str, value: Any, by_reference: bool
) -> None:
    api.patch(session_path(scope_id), {"meta": {key: value}})

    revision = EnvelopeRevision.objects.get()
    assert (key in revision.value_digests, key in revision.inline_values) == (
        by_reference,
        not by_reference,
    )
    assert EnvelopeValue.objects.filter(value=value).exists() == by_reference
    assert revision_meta(revision) == {key: value}


def test_values_are_not_shared_between_envelopes(api: ApiClient, scope_id: str) -> None:
    api.put(session_path(scope_id, "a"), {"meta": {"personaId": big("same")}})
    api.put(session_path(scope_id, "b"), {"meta": {"personaId": big("same")}})

    assert EnvelopeValue.objects.count() == 2


# --- Retention --------------------------------------------------------------------------


def write_at(api: ApiClient, scope_id: str, moment: datetime, meta: dict) -> None:
    with time_machine.travel(moment, tick=False):
        response = api.patch(session_path(scope_id), {"meta": meta})
    assert response.status_code in (200, 201)


def prune_at(moment: datetime) -> str:
    out = io.StringIO()
    with time_machine.travel(moment, tick=False):
        call_command("prune_envelope_revisions", stdout=out)
    return out.getvalue()


def test_prune_deletes_revisions_older_than_the_retention_but_not_the_latest(
    api: ApiClient, scope_id: str
) -> None:
    write_at(api, scope_id, START, {"cwd": big("/v1")})
    write_at(api, scope_id, START + timedelta(days=1), {"cwd": big("/v2")})
    write_at(api, scope_id, START + timedelta(days=2), {"cwd": big("/v3")})
    write_at(api, scope_id, START + timedelta(days=40), {"cwd": big("/v4")})

    output = prune_at(START + timedelta(days=31, hours=12))

    assert revision_versions(scope_id) == [3, 4]
    assert "Pruned 2 revisions and 2 stored values of 1 envelopes" in output
    assert sorted(EnvelopeValue.objects.values_list("value", flat=True)) == [
        big("/v3"),
        big("/v4"),
    ]
    assert api.get(session_path(scope_id)).json()["meta"] == {"cwd": big("/v4")}


def test_prune_never_deletes_the_latest_revision_however_old(
    api: ApiClient, scope_id: str
) -> None:
    write_at(api, scope_id, START, {"cwd": "/only"})

    prune_at(START + timedelta(days=365))

    assert revision_versions(scope_id) == [1]
    assert revision_meta(EnvelopeRevision.objects.get()) == {"cwd": "/only"}


def test_prune_keeps_values_that_a_remaining_revision_references(
    api: ApiClient, scope_id: str
) -> None:
    write_at(api, scope_id, START, {"cwd": big("/kept"), "workingNotes": "old"})
    write_at(api, scope_id, START + timedelta(days=60), {"workingNotes": "new"})

    prune_at(START + timedelta(days=61))

    assert revision_versions(scope_id) == [2]
    assert revision_meta(EnvelopeRevision.objects.get()) == {
        "cwd": big("/kept"),
        "workingNotes": "new",
    }
    assert sorted(EnvelopeValue.objects.values_list("value", flat=True)) == [
        big("/kept"),
        "new",
    ]


def test_the_retention_is_a_setting(
    api: ApiClient, scope_id: str, settings: Any
) -> None:
    settings.SESSION_REVISION_RETENTION = timedelta(days=1)
    write_at(api, scope_id, START, {"cwd": "/a"})
    write_at(api, scope_id, START + timedelta(days=3), {"cwd": "/b"})

    prune_at(START + timedelta(days=2))

    assert revision_versions(scope_id) == [2]


def test_prune_prints_its_progress_per_envelope_on_stderr(
    api: ApiClient, scope_id: str
) -> None:
    for session in ("a", "b", "c"):
        path = session_path(scope_id, session)
        for day, cwd in ((0, "/old"), (40, "/new")):
            with time_machine.travel(START + timedelta(days=day), tick=False):
                assert api.patch(path, {"meta": {"cwd": cwd}}).status_code in (200, 201)
    out, err = io.StringIO(), io.StringIO()

    with time_machine.travel(START + timedelta(days=41), tick=False):
        call_command("prune_envelope_revisions", stdout=out, stderr=err)

    assert err.getvalue().splitlines() == [
        f"  {done} of 3 envelopes pruned ({100 * done // 3}%)" for done in range(4)
    ]
    assert "Pruned 3 revisions" in out.getvalue()


def test_prune_leaves_envelopes_without_old_revisions_alone(
    api: ApiClient, scope_id: str
) -> None:
    write_at(api, scope_id, START, {"cwd": "/a"})
    write_at(api, scope_id, START + timedelta(days=1), {"cwd": "/b"})

    output = prune_at(START + timedelta(days=20))

    assert revision_versions(scope_id) == [1, 2]
    assert "Pruned 0 revisions and 0 stored values of 0 envelopes" in output


def test_writes_after_a_prune_store_values_again_when_needed(
    api: ApiClient, scope_id: str
) -> None:
    write_at(api, scope_id, START, {"cwd": big("/again")})
    write_at(api, scope_id, START + timedelta(days=1), {"cwd": big("/other")})
    prune_at(START + timedelta(days=40))

    write_at(api, scope_id, START + timedelta(days=41), {"cwd": big("/again")})

    assert revision_meta(EnvelopeRevision.objects.get(version=3)) == {
        "cwd": big("/again")
    }


# --- Append-only guards -------------------------------------------------------------------

MODELS = [EnvelopeRevision, EnvelopeValue]


@pytest.fixture
def written(api: ApiClient, scope_id: str) -> str:
    api.patch(session_path(scope_id), {"meta": {"workingNotes": "a"}})
    api.patch(session_path(scope_id), {"meta": {"workingNotes": "b"}})
    return scope_id


@pytest.mark.parametrize("model", MODELS)
def test_save_refuses_to_update(written: str, model: Any) -> None:
    row = model.objects.first()

    with pytest.raises(ImmutableRecordError):
        row.save()


@pytest.mark.parametrize("model", MODELS)
def test_instance_delete_is_refused(written: str, model: Any) -> None:
    with pytest.raises(ImmutableRecordError):
        model.objects.first().delete()


@pytest.mark.parametrize("model", MODELS)
def test_queryset_update_is_refused(written: str, model: Any) -> None:
    with pytest.raises(ImmutableRecordError):
        model.objects.update(envelope_id=0)


@pytest.mark.parametrize("model", MODELS)
def test_queryset_delete_is_refused(written: str, model: Any) -> None:
    with pytest.raises(ImmutableRecordError):
        model.objects.all().delete()
    assert model.objects.count() == 2


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("statement", "message"),
    [
        ("UPDATE sessions_app_enveloperevision SET principal = 'x'", "append-only"),
        ("UPDATE sessions_app_envelopevalue SET value = '\"x\"'", "append-only"),
        (
            "DELETE FROM sessions_app_enveloperevision WHERE version = 2",
            "latest revision",
        ),
    ],
)
def test_postgres_triggers_refuse_raw_sql(
    written: str, statement: str, message: str
) -> None:
    with (
        pytest.raises(DatabaseError, match=message),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement)
    assert revision_versions(written) == [1, 2]
    assert sorted(EnvelopeValue.objects.values_list("value", flat=True)) == ["a", "b"]


@pytest.mark.postgres
def test_postgres_triggers_allow_pruning_an_older_revision(written: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM sessions_app_enveloperevision WHERE version = 1")

    assert revision_versions(written) == [2]


def test_the_live_envelope_row_stays_mutable(written: str) -> None:
    SessionEnvelope.objects.update(meta={"cwd": "/edited"})

    assert SessionEnvelope.objects.get().meta == {"cwd": "/edited"}
