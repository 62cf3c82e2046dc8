"""Export and restore (docs/export.md): a scope with one of everything goes out
through ``GET /v1/scopes/{id}/export``, the database is emptied for real
(``flush``), ``import_bundle`` restores it, and every read, replay and the next
capture answer as before."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError

from lifecycle.models import ExportRecord
from sources.models import ContentSource, Scope
from tests.conftest import ApiClient, error_of
from tests.lifecycle.bundle_world import (
    CONTENT,
    READ_AT,
    T0,
    World,
    world_age,
    world_build,
    world_reads,
)

pytestmark = pytest.mark.django_db(transaction=True)


def _export(api: ApiClient, scope_id: str, **query: str) -> Any:
    return api.get(f"/v1/scopes/{scope_id}/export", query=query or None)


def _records(bundle: bytes) -> list[dict[str, Any]]:
    return [json.loads(line)["record"] for line in bundle.splitlines()]


@pytest.fixture
def exported(api: ApiClient, tmp_path: Path) -> tuple[World, dict[str, Any], Path]:
    """The world, its reads at READ_AT, and its bundle (exported over HTTP)."""
    with time_machine.travel(T0, tick=False) as clock:
        world = world_build(api)
        clock.move_to(T0.replace(hour=14))
        world_age(api, world)
        clock.move_to(READ_AT)
        reads = world_reads(api, world)
        response = _export(api, world.scope_id)
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/x-ndjson"
    path = tmp_path / "scope.ndjson"
    path.write_bytes(response.content)
    return world, reads, path


def _restore(path: Path, make_token: Callable[..., str]) -> ApiClient:
    """Empty the database (every table), restore ``path``, and a new admin client."""
    call_command("flush", interactive=False, verbosity=0)
    assert not Scope.objects.exists()
    call_command("import_bundle", str(path), verbosity=0)
    return ApiClient(make_token("*:admin", name="root"))


def test_a_restored_scope_answers_every_read_as_before(
    exported: tuple[World, dict[str, Any], Path], make_token: Callable[..., str]
) -> None:
    world, reads, path = exported

    restored = _restore(path, make_token)

    with time_machine.travel(READ_AT, tick=False):
        after = world_reads(restored, world)

    assert after == reads
    statuses = [read[0] for read in reads.values()]
    assert statuses.count(200) == len(statuses) - 2  # sess-2, sess-3: no envelope


def test_replays_return_the_original_receipts_after_a_restore(
    exported: tuple[World, dict[str, Any], Path], make_token: Callable[..., str]
) -> None:
    world, _, path = exported
    with time_machine.travel(READ_AT, tick=False):
        api = ApiClient(make_token("*:admin", name="root"))
        receipts = [api.post(url, body).json() for url, body, _ in world.captures]

        restored = _restore(path, make_token)
        replayed = [restored.post(url, body) for url, body, _ in world.captures]
        conflict = restored.post(
            CONTENT, {"scope_id": world.scope_id, "source_id": "c-1", "content": "x"}
        )
        after = restored.post(
            CONTENT, {"scope_id": world.scope_id, "source_id": "new", "content": "n"}
        )

    assert [response.json() for response in replayed] == receipts
    assert error_of(conflict)["code"] == "source_conflict"
    assert conflict.status_code == 409
    assert after.json()["position"] == len(world.captures) + 1


def test_the_bundle_has_every_kind_and_no_erased_text(
    exported: tuple[World, dict[str, Any], Path],
) -> None:
    _, _, path = exported
    bundle = path.read_bytes()
    records = _records(bundle)
    kinds = [record["kind"] for record in records]

    assert kinds[:2] == ["manifest", "scope"]
    assert kinds[-1] == "trailer"
    assert records[0]["counts"] == {
        "scope": 1,
        "source": 8,
        "attempt": 9,
        "closure": 1,
        "hold": 2,
        "purge_run": 1,
        "redaction": 1,
        "envelope": 1,
        "envelope_value": 1,
        "envelope_revision": 3,
        "handoff_revision": 1,
        "handoff_head": 1,
    }
    assert b"erase me" not in bundle
    tombstones = {
        record["source_id"]: record["purge_run"]
        for record in records
        if record["kind"] == "source" and record["content"] is None
    }
    assert set(tombstones) == {"c-secret", "n-expired", "n-purged"}
    assert b"token" not in bundle.lower()


def test_an_export_is_recorded_with_its_digest(
    exported: tuple[World, dict[str, Any], Path],
) -> None:
    world, _, path = exported
    trailer = _records(path.read_bytes())[-1]
    chain = json.loads(path.read_bytes().splitlines()[-1])["chain"]

    record = ExportRecord.objects.get()

    assert (record.scope_id, record.session_id, record.via) == (
        world.scope_id,
        None,
        "http",
    )
    assert record.exported_by == "root"
    assert record.chain == chain
    assert record.records == trailer["records"] + 1
    assert record.counts["source"] == 8


def test_a_restore_into_an_instance_holding_the_scope_is_refused(
    exported: tuple[World, dict[str, Any], Path],
) -> None:
    _, _, path = exported
    sources = ContentSource.objects.count()
    stderr = io.StringIO()

    with pytest.raises(CommandError, match="the first at line 2; nothing was written"):
        call_command("import_bundle", str(path), verbosity=0, stderr=stderr)

    assert "exists on this instance" in stderr.getvalue()
    assert ContentSource.objects.count() == sources


def test_the_commands_round_trip_a_scope(
    exported: tuple[World, dict[str, Any], Path],
    make_token: Callable[..., str],
    tmp_path: Path,
) -> None:
    world, _, path = exported
    again = tmp_path / "again.ndjson"
    _restore(path, make_token)

    call_command("export_scope", world.scope_id, "--output", str(again))
    call_command("verify_bundle", str(again))

    first, second = _records(path.read_bytes()), _records(again.read_bytes())
    assert first[1:] == second[1:]
    assert ExportRecord.objects.get().via == "command"
