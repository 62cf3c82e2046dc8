"""``manage.py import_powercontext`` (docs/migrating.md) on reference-format files."""

from __future__ import annotations

import sqlite3
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from sources.importing.plan import import_plan
from sources.importing.reference import ReferenceDatabase
from sources.importing.writer import import_verify
from sources.models import CaptureAttempt, ContentSource, Scope, SourceJournalHead
from tests.conftest import ApiClient
from tests.importing.reference_file import (
    ReferenceFile,
    note_payload,
    payload,
    scope_id,
)

pytestmark = pytest.mark.django_db(transaction=True)

PARENT, CHILD = scope_id(1), scope_id(2)
FUTURE = "2031-05-06T07:08:09.123456+00:00"
PAST = "2020-01-01T00:00:00+00:00"


@pytest.fixture
def reference(tmp_path: Path) -> Path:
    file = ReferenceFile(tmp_path / "powercontext.db")
    file.scope(PARENT, title="Parent", external=[("repo", "acme/api")], key="k-p")
    file.scope(CHILD, title="Child", parent=PARENT, context=[PARENT], key="k-c")
    file.sources(
        PARENT,
        [
            ("a", payload("a", "hello", metadata={"b": 1.5, "a": [1, 2]})),
            (
                "n-old",
                note_payload(
                    "n-old",
                    "x",
                    session_id="s",
                    note_kind="validation",
                    expires_at=PAST,
                ),
            ),
            (
                "n-new",
                note_payload(
                    "n-new",
                    "y",
                    session_id="s",
                    note_kind="unresolved",
                    expires_at=FUTURE,
                ),
            ),
        ],
    )
    file.sources(CHILD, [("src_1", payload("src_1", {"z": [1, "2"]}, wire=True))])
    return file.close()


def _import(path: Path, *options: str) -> str:
    out = StringIO()
    call_command(
        "import_powercontext",
        str(path),
        "--no-progress",
        *options,
        stdout=out,
        stderr=out,
    )
    return out.getvalue()


def _rows() -> list[tuple]:
    return list(
        ContentSource.objects.order_by("scope_id", "position").values_list(
            "scope_id",
            "position",
            "source_id",
            "is_working_note",
            "session_id",
            "note_kind",
            "expires_at",
            "value_digest",
        )
    )


def test_scopes_and_sources_arrive_with_their_positions(
    reference: Path, api: ApiClient
) -> None:
    output = _import(reference)

    parent = api.get(f"/v1/scopes/{PARENT}").json()
    child = api.get(f"/v1/scopes/{CHILD}").json()
    listed = api.get(f"/v1/scopes/{PARENT}/sources").json()["items"]
    created = api.get(f"/v1/scopes/{CHILD}/sources/content/src_1").json()
    assert "Verified 4 Source(s)" in output
    assert parent["external_references"] == [{"kind": "repo", "value": "acme/api"}]
    assert (child["parent_scope_id"], child["context_references"]) == (PARENT, [PARENT])
    assert [(item["source_id"], item["position"]) for item in listed] == [
        ("a", 1),
        ("n-old", 2),
        ("n-new", 3),
    ]
    assert created["content"] == {"z": [1, "2"]}
    note = ContentSource.objects.get(source_id="n-new")
    assert (note.is_working_note, note.session_id, note.note_kind) == (
        True,
        "s",
        "unresolved",
    )
    assert note.expires_at is not None
    assert note.expires_at.isoformat() == FUTURE
    assert SourceJournalHead.objects.get(scope_id=PARENT).last_position == 3


def test_an_imported_note_replays_after_expiry_and_positions_continue(
    reference: Path, api: ApiClient
) -> None:
    _import(reference)
    note = {
        "scope_id": PARENT,
        "source_id": "n-old",
        "content": "x",
        "session_id": "s",
        "note_kind": "validation",
        "expires_at": PAST,
    }

    replay = api.post("/v1/sources/working-notes", note)
    changed = api.post("/v1/sources/working-notes", {**note, "content": "other"})
    new = api.post(
        "/v1/sources/content", {"scope_id": PARENT, "source_id": "b", "content": "c"}
    )

    assert (replay.status_code, replay.json()["position"]) == (202, 2)
    assert changed.status_code == 409
    assert (new.status_code, new.json()["position"]) == (202, 4)


def test_a_second_run_imports_nothing_twice(reference: Path) -> None:
    _import(reference)
    rows, attempts = _rows(), CaptureAttempt.objects.count()

    output = _import(reference)

    assert "0 new Source(s)" in output
    assert "4 were already here" in output
    assert (_rows(), CaptureAttempt.objects.count()) == (rows, attempts)


def test_a_dry_run_writes_nothing(reference: Path) -> None:
    output = _import(reference, "--dry-run")

    assert "4 new" in output
    assert "Dry run" in output
    assert not Scope.objects.exists()
    assert not ContentSource.objects.exists()


def _append(path: Path, scope_id: str, source_id: str, text: str) -> None:
    file = ReferenceFile(path)
    file.sources(scope_id, [(source_id, payload(source_id, text))])
    file.close()


def test_an_identity_holding_another_value_refuses_everything(
    reference: Path, api: ApiClient
) -> None:
    _import(reference, "--scope", PARENT)
    api.post(
        "/v1/sources/content",
        {"scope_id": PARENT, "source_id": "late", "content": "ours"},
    )
    _append(reference, PARENT, "late", "theirs")  # position 4 here and there
    rows = _rows()

    with pytest.raises(CommandError, match="conflict"):
        _import(reference)

    assert _rows() == rows
    assert not Scope.objects.filter(scope_id=CHILD).exists()


def test_a_position_taken_by_another_identity_refuses_everything(
    reference: Path, api: ApiClient
) -> None:
    _import(reference)
    api.post(
        "/v1/sources/content", {"scope_id": PARENT, "source_id": "ours", "content": "c"}
    )
    _append(reference, PARENT, "theirs", "t")
    out = StringIO()

    with pytest.raises(CommandError, match="1 conflict"):
        call_command(
            "import_powercontext",
            str(reference),
            "--no-progress",
            stdout=out,
            stderr=out,
        )

    assert "position 4 holds 'ours'" in out.getvalue()
    assert not ContentSource.objects.filter(source_id="theirs").exists()


def test_a_scope_with_other_fields_is_a_conflict(
    reference: Path, api: ApiClient
) -> None:
    _import(reference)
    with sqlite3.connect(reference) as db:
        db.execute(
            "UPDATE pc_scopes SET title = 'Renamed' WHERE scope_id = ?", [PARENT]
        )

    with pytest.raises(CommandError, match="conflict"):
        _import(reference)

    assert Scope.objects.get(scope_id=PARENT).title == "Parent"


def test_a_child_without_its_parent_is_refused(reference: Path) -> None:
    with pytest.raises(CommandError, match="conflict"):
        _import(reference, "--scope", CHILD)

    assert not Scope.objects.exists()


def test_rows_it_cannot_keep_are_skipped_and_named(tmp_path: Path) -> None:
    file = ReferenceFile(tmp_path / "ref.db")
    file.scope(PARENT)
    file.sources(PARENT, [("a", payload("a", "ok"))])
    file.sources(PARENT, [("odd", payload("odd", "x"))], source_type="artifact")
    path = file.close()

    output = _import(path)

    assert f"skipped {PARENT} / artifact / 'odd'" in output
    assert list(ContentSource.objects.values_list("source_id", flat=True)) == ["a"]


def test_a_file_that_is_not_a_reference_database_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    sqlite3.connect(other).close()

    with pytest.raises(CommandError, match="not a PowerContext"):
        _import(other)


def test_verification_finds_a_difference_with_the_file(reference: Path) -> None:
    _import(reference)
    with sqlite3.connect(reference) as db:
        db.execute(
            "UPDATE pc_sources SET payload = ? WHERE source_id = 'a'",
            [payload("a", "tampered")],
        )
    file = ReferenceDatabase(reference)
    plan = import_plan(file, only=None, principal="static-token")

    mismatches = list(import_verify(file, plan))

    assert {(m.source_id, m.reason) for m in mismatches} >= {
        ("a", "content differs"),
        ("a", "value_digest differs"),
    }
