"""A reference file the API would not have written is refused whole.

Each case breaks one valid file in one way; the command must name the row and
the rule on stderr, exit with a ``CommandError`` (manage.py: status 1, one line,
no traceback) and leave every table of this registry exactly as it was.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from sources.models import (
    CaptureAttempt,
    ContentSource,
    Scope,
    ScopeContextReference,
    ScopeExternalReference,
    SourceJournalHead,
)
from tests.conftest import ApiClient
from tests.importing.reference_file import (
    ReferenceFile,
    note_payload,
    payload,
    scope_id,
)

pytestmark = pytest.mark.django_db(transaction=True)

ROOT, LEAF = scope_id(1), scope_id(2)
Breakage = Callable[[sqlite3.Connection], Any]


@pytest.fixture
def reference(tmp_path: Path) -> Path:
    file = ReferenceFile(tmp_path / "powercontext.db")
    file.scope(ROOT, title="Root", external=[("repo", "acme/api")], key="k-root")
    file.scope(LEAF, title="Leaf", parent=ROOT, context=[ROOT], key="k-leaf")
    file.sources(
        ROOT,
        [
            ("a", payload("a", "first", metadata={"n": 1})),
            ("b", payload("b", "second")),
            (
                "note",
                note_payload(
                    "note",
                    "seen",
                    session_id="s",
                    note_kind="inspection",
                    expires_at=None,
                ),
            ),
        ],
    )
    file.sources(LEAF, [("c", payload("c", "third"))])
    return file.close()


def _set_payload(source_id: str, body: bytes) -> Breakage:
    return lambda db: db.execute(
        "UPDATE pc_sources SET payload = ? WHERE source_id = ?", [body, source_id]
    )


def _loosen_sources(db: sqlite3.Connection) -> None:
    """pc_sources without its constraints (a file another tool wrote)."""
    db.executescript(
        "CREATE TABLE loose AS SELECT * FROM pc_sources; DROP TABLE pc_sources; "
        "ALTER TABLE loose RENAME TO pc_sources;"
    )


def _null_position(db: sqlite3.Connection) -> None:
    _loosen_sources(db)
    db.execute("UPDATE pc_sources SET journal_position = NULL WHERE source_id = 'b'")


def _rename_scope(new: str) -> Breakage:
    def rename(db: sqlite3.Connection) -> None:
        db.execute("PRAGMA foreign_keys = OFF")
        for table, column in [
            ("pc_scopes", "scope_id"),
            ("pc_scopes", "parent_scope_id"),
            ("pc_sources", "scope_id"),
            ("pc_scope_creation_requests", "scope_id"),
            ("pc_source_journal_heads", "scope_id"),
            ("pc_scope_context_references", "scope_id"),
            ("pc_scope_context_references", "referenced_scope_id"),
            ("pc_scope_external_references", "scope_id"),
        ]:
            db.execute(
                f"UPDATE {table} SET {column} = ? WHERE {column} = ?",
                [new, ROOT],
            )

    return rename


def _receipt_text() -> str:
    return json.dumps({"schema": "powercontext.handoff-receipt.v1", "status": "ok"})


# (what breaks, the table, the row's key, the rule) - one case per defect of the
# issue, then the other rules the API applies to the same fields.
CASES: list[tuple[str, Breakage, str, str, str]] = [
    (
        "gap",
        lambda db: db.execute(
            "UPDATE pc_sources SET journal_position = 5 WHERE source_id = 'note'"
        ),
        "pc_sources",
        repr((ROOT, "content", "note")),
        "journal_position 5: positions of a scope run 1, 2, 3...",
    ),
    (
        "negative position",
        lambda db: db.execute(
            "UPDATE pc_sources SET journal_position = -1 WHERE source_id = 'a'"
        ),
        "pc_sources",
        repr((ROOT, "content", "a")),
        "journal_position -1",
    ),
    (
        "NULL position",
        _null_position,
        "pc_sources",
        repr((ROOT, "content", "b")),
        "journal_position None is not an integer",
    ),
    (
        "NUL in content",
        _set_payload("b", payload("b", "sec\x00ond")),
        "pc_sources",
        repr((ROOT, "content", "b")),
        "content: String must not contain NUL characters.",
    ),
    (
        "list metadata",
        _set_payload("a", payload("a", "first", metadata=[1, 2])),  # type: ignore[arg-type]
        "pc_sources",
        repr((ROOT, "content", "a")),
        "metadata: Input should be a valid dictionary",
    ),
    (
        "NUL in a metadata key",
        _set_payload("a", payload("a", "first", metadata={"k\x00": 1})),
        "pc_sources",
        repr((ROOT, "content", "a")),
        "Object key must not contain NUL characters.",
    ),
    (
        "NUL in a scope id",
        _rename_scope(ROOT[:-1] + "\x00"),
        "pc_scopes",
        repr(ROOT[:-1] + "\x00"),
        "scope_id is not 'scp_' and 26 lowercase Crockford base32 digits",
    ),
    (
        "scope id not of the scp_ form",
        _rename_scope("project-1"),
        "pc_scopes",
        repr("project-1"),
        "scope_id is not 'scp_' and 26 lowercase Crockford base32 digits",
    ),
    (
        "300-character title",
        lambda db: db.execute("UPDATE pc_scopes SET title = ?", ["t" * 300]),
        "pc_scopes",
        repr(ROOT),
        "title: String should have at most 256 characters",
    ),
    (
        "NULL summary",
        lambda db: (
            db.executescript(
                "CREATE TABLE loose AS SELECT * FROM pc_scopes; DROP TABLE pc_scopes;"
                " ALTER TABLE loose RENAME TO pc_scopes;"
            ),
            db.execute("UPDATE pc_scopes SET summary = NULL"),
        ),
        "pc_scopes",
        repr(ROOT),
        "summary: Input should be a valid string",
    ),
    (
        "parent cycle",
        lambda db: db.execute(
            "UPDATE pc_scopes SET parent_scope_id = ? WHERE scope_id = ?", [LEAF, ROOT]
        ),
        "pc_scopes",
        repr(ROOT),
        f"parent cycle {ROOT!r} -> {LEAF!r} -> {ROOT!r}",
    ),
    (
        "a scope referencing itself",
        lambda db: db.execute(
            "INSERT INTO pc_scope_context_references VALUES (?, ?)", [ROOT, ROOT]
        ),
        "pc_scopes",
        repr(ROOT),
        "context_references names the scope itself",
    ),
    (
        "a Source of a scope not in the file",
        lambda db: db.execute(
            "INSERT INTO pc_sources VALUES (?, 'content', 'x', ?, 1)",
            [scope_id(9), payload("x", "orphan")],
        ),
        "pc_sources",
        repr((scope_id(9), "content", "x")),
        "its scope_id is not in pc_scopes",
    ),
    (
        "source id with padding",
        lambda db: db.execute(
            "UPDATE pc_sources SET source_id = ' c' WHERE source_id = 'c'"
        ),
        "pc_sources",
        repr((LEAF, "content", " c")),
        "source_id: Must not start or end with whitespace.",
    ),
    (
        "a note without its session",
        _set_payload(
            "note",
            payload(
                "note", "seen", metadata={"note_kind": "inspection"}, working_note=True
            ),
        ),
        "pc_sources",
        repr((ROOT, "content", "note")),
        "session_id: Field required",
    ),
    (
        "an expiry without a time zone",
        _set_payload(
            "note",
            note_payload(
                "note",
                "seen",
                session_id="s",
                note_kind="inspection",
                expires_at="2031-01-01T00:00:00",
            ),
        ),
        "pc_sources",
        repr((ROOT, "content", "note")),
        "expires_at: Input should have timezone info",
    ),
    (
        "a reserved receipt schema the server did not write",
        _set_payload("b", payload("b", _receipt_text())),
        "pc_sources",
        repr((ROOT, "content", "b")),
        "content: The request is invalid. (uses a server-reserved handoff receipt",
    ),
    (
        "an unreadable payload",
        _set_payload("b", b"{not json"),
        "pc_sources",
        repr((ROOT, "content", "b")),
        "unreadable payload",
    ),
    (
        "version 0",
        lambda db: db.execute("UPDATE pc_scopes SET version = 0"),
        "pc_scopes",
        repr(ROOT),
        "version 0 is not an integer of at least 1",
    ),
]


def _registry() -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table an import writes."""
    models = [
        Scope,
        ScopeContextReference,
        ScopeExternalReference,
        SourceJournalHead,
        ContentSource,
        CaptureAttempt,
    ]
    return {
        model.__name__: sorted(map(repr, model.objects.values_list()))  # type: ignore[attr-defined]
        for model in models
    }


@pytest.mark.parametrize(
    ("breakage", "table", "key", "rule"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_an_invalid_row_refuses_the_whole_file(
    reference: Path,
    api: ApiClient,
    breakage: Breakage,
    table: str,
    key: str,
    rule: str,
) -> None:
    api.post("/v1/scopes", {"title": "Ours", "summary": "S", "idempotency_key": "k"})
    with sqlite3.connect(reference) as db:
        breakage(db)
    before = _registry()
    err = StringIO()

    with pytest.raises(CommandError, match="invalid row"):
        call_command(
            "import_powercontext",
            str(reference),
            "--no-progress",
            stdout=StringIO(),
            stderr=err,
        )

    lines = [line for line in err.getvalue().splitlines() if rule in line]
    assert lines, err.getvalue()
    assert f"invalid {reference}: {table} {key}: " in lines[0]
    assert "Traceback" not in err.getvalue()
    assert _registry() == before


def test_missing_optional_tables_read_as_empty(reference: Path, api: ApiClient) -> None:
    with sqlite3.connect(reference) as db:
        db.executescript(
            "DROP TABLE pc_scope_context_references; "
            "DROP TABLE pc_scope_external_references; "
            "DROP TABLE pc_source_journal_heads;"
        )

    call_command(
        "import_powercontext", str(reference), "--no-progress", stdout=StringIO()
    )

    root = api.get(f"/v1/scopes/{ROOT}").json()
    assert (root["external_references"], root["context_references"]) == ([], [])
    assert ContentSource.objects.filter(scope_id=ROOT).count() == 3


def test_a_receipt_the_reference_wrote_is_imported_as_content(
    reference: Path, api: ApiClient
) -> None:
    receipt = _receipt_text()
    metadata = {"kind": "handoff-receipt", "schema": "powercontext.handoff-receipt.v1"}
    file = ReferenceFile(reference)
    file.sources(
        LEAF,
        [("r", payload("r", receipt, metadata=metadata, handoff_receipt=True))],
    )
    file.close()

    call_command(
        "import_powercontext", str(reference), "--no-progress", stdout=StringIO()
    )

    stored = api.get(f"/v1/scopes/{LEAF}/sources/content/r").json()
    row = ContentSource.objects.get(scope_id=LEAF, source_id="r")
    assert (stored["content"], stored["position"], row.metadata) == (
        receipt,
        2,
        metadata,
    )


def test_a_failed_verification_rolls_the_whole_import_back(
    reference: Path, api: ApiClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Import and verification are one transaction: a difference keeps nothing."""
    from sources.importing import writer

    api.post("/v1/scopes", {"title": "Ours", "summary": "S", "idempotency_key": "k"})
    before = _registry()
    monkeypatch.setattr(
        writer,
        "import_verify",
        lambda *args, **kwargs: iter([writer.Mismatch(ROOT, "a", "content differs")]),
    )

    with pytest.raises(CommandError, match=r"1 difference.*nothing was written"):
        call_command(
            "import_powercontext",
            str(reference),
            "--no-progress",
            stdout=StringIO(),
            stderr=StringIO(),
        )

    assert _registry() == before


def _drop_summary(db: sqlite3.Connection) -> None:
    db.executescript(
        "CREATE TABLE other AS SELECT scope_id, title, parent_scope_id, version "
        "FROM pc_scopes; DROP TABLE pc_scopes; ALTER TABLE other RENAME TO pc_scopes;"
    )


def _null_payload(db: sqlite3.Connection) -> None:
    _loosen_sources(db)
    db.execute("UPDATE pc_sources SET payload = NULL WHERE source_id = 'b'")


def test_a_table_of_another_shape_is_refused_in_one_line(
    reference: Path, api: ApiClient
) -> None:
    with sqlite3.connect(reference) as db:
        _drop_summary(db)
    before = _registry()

    with pytest.raises(CommandError, match=r"no such column: summary.*nothing was"):
        call_command(
            "import_powercontext", str(reference), "--no-progress", stdout=StringIO()
        )

    assert _registry() == before


def test_a_null_payload_is_an_invalid_row(reference: Path) -> None:
    with sqlite3.connect(reference) as db:
        _null_payload(db)
    err = StringIO()

    with pytest.raises(CommandError, match="1 invalid row"):
        call_command(
            "import_powercontext",
            str(reference),
            "--no-progress",
            stdout=StringIO(),
            stderr=err,
        )

    assert (
        f"pc_sources {(ROOT, 'content', 'b')!r}: unreadable payload" in err.getvalue()
    )
    assert not Scope.objects.exists()
