"""Reading a PowerContext 1.4.1 SQLite database (read-only), as our values.

The tables read - learnt from a database the reference server made - are
``pc_scopes`` (id, title, summary, parent, version), ``pc_scope_context_references``,
``pc_scope_external_references`` (by ordinal), ``pc_scope_creation_requests``
(idempotency key of each scope), ``pc_source_journal_heads`` and ``pc_sources``:
one row per Source with its ``journal_position`` and a JSON ``payload``
(``encoding`` ``powercontext-source-v1``, ``representation`` ``native``) whose
``value`` holds the content, metadata and working-note flag. A Working Note's
session, kind and expiry are in its metadata; a Source created with a
server-assigned id keeps its JSON content in ``wire_content``.

Every Source becomes the ``SourceValue`` our own capture would have built from
the same request, so its value digest is the one a replay computes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from powercontext.jsonvalues import request_float

from ..digests import SourceValue
from ..rows import CONTENT
from ..services.values import working_note_value

ENCODING = "powercontext-source-v1"
REQUIRED_TABLES = ("pc_scopes", "pc_sources", "pc_scope_creation_requests")
# Tables a reference database has once anything used them; absent ones read as empty.
OPTIONAL_TABLES = (
    "pc_scope_context_references",
    "pc_scope_external_references",
    "pc_source_journal_heads",
)


class ReferenceUnreadable(Exception):
    """The file is not a reference database this importer understands."""


@dataclass(frozen=True)
class ReferenceScope:
    scope_id: str
    title: str
    summary: str
    parent_scope_id: str | None
    version: int
    idempotency_key: str
    context_references: list[str] = field(default_factory=list)
    external_references: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class ReferenceSource:
    scope_id: str
    source_id: str
    position: int
    value: SourceValue


@dataclass(frozen=True)
class Unsupported:
    """A row this importer cannot bring over, and why."""

    scope_id: str
    source_type: str
    source_id: str
    reason: str


class ReferenceDatabase:
    """A reference database file, opened read-only for each read."""

    def __init__(self, path: Path) -> None:
        if not path.is_file():
            raise ReferenceUnreadable(f"{path} is not a file.")
        self.path = path
        try:
            with closing(self._connect()) as db:
                names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        except sqlite3.DatabaseError as exc:
            raise ReferenceUnreadable(
                f"{path} is not an SQLite database: {exc}"
            ) from None
        self.tables = frozenset(names)
        missing = [table for table in REQUIRED_TABLES if table not in names]
        if missing:
            raise ReferenceUnreadable(
                f"{path} has no {', '.join(missing)}: "
                "not a PowerContext 1.4.1 database."
            )

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True)
        db.text_factory = str
        return db

    def scopes(self) -> list[ReferenceScope]:
        """Every scope, parents before children."""
        with closing(self._connect()) as db:
            keys = dict(
                db.execute(
                    "SELECT scope_id, idempotency_key FROM pc_scope_creation_requests"
                ).fetchall()[::-1]
            )  # the first key of a scope wins
            context: dict[str, list[str]] = {}
            for scope_id, target in self._optional_rows(
                db,
                "pc_scope_context_references",
                "SELECT scope_id, referenced_scope_id FROM pc_scope_context_references "
                "ORDER BY rowid",
            ):
                context.setdefault(scope_id, []).append(target)
            external: dict[str, list[tuple[str, str]]] = {}
            for scope_id, kind, value in self._optional_rows(
                db,
                "pc_scope_external_references",
                "SELECT scope_id, kind, value FROM pc_scope_external_references "
                "ORDER BY scope_id, ordinal",
            ):
                external.setdefault(scope_id, []).append((kind, value))
            rows = db.execute(
                "SELECT scope_id, title, summary, parent_scope_id, version "
                "FROM pc_scopes ORDER BY scope_id"
            ).fetchall()
        scopes = {
            row[0]: ReferenceScope(
                scope_id=row[0],
                title=row[1],
                summary=row[2],
                parent_scope_id=row[3],
                version=row[4],
                idempotency_key=keys.get(row[0], f"imported:{row[0]}"),
                context_references=context.get(row[0], []),
                external_references=external.get(row[0], []),
            )
            for row in rows
        }
        return _parents_first(scopes)

    def _optional_rows(
        self, db: sqlite3.Connection, table: str, query: str
    ) -> list[tuple[Any, ...]]:
        return db.execute(query).fetchall() if table in self.tables else []

    def source_rows(self) -> Iterator[tuple[Any, ...]]:
        """Every ``pc_sources`` row as stored: ``(scope_id, source_type,
        source_id, journal_position, payload)``, by scope, then position."""
        with closing(self._connect()) as db:
            cursor = db.execute(
                "SELECT scope_id, source_type, source_id, journal_position, payload "
                "FROM pc_sources ORDER BY scope_id, journal_position"
            )
            while batch := cursor.fetchmany(2000):
                yield from batch

    def source_count(self, scope_ids: set[str] | None = None) -> int:
        """How many rows ``pc_sources`` holds (in ``scope_ids`` when given)."""
        with closing(self._connect()) as db:
            if scope_ids is None:
                found = db.execute("SELECT count(*) FROM pc_sources").fetchone()
            else:
                wanted = sorted(scope_ids)
                marks = ", ".join("?" * len(wanted))
                found = db.execute(
                    f"SELECT count(*) FROM pc_sources WHERE scope_id IN ({marks})",  # noqa: S608 - placeholders only
                    wanted,
                ).fetchone()
        return int(found[0])

    def sources(
        self, scope_id: str, *, unsupported: list[Unsupported] | None = None
    ) -> Iterator[ReferenceSource]:
        """The scope's Sources by position; rows that cannot be brought over are
        appended to ``unsupported`` (when given) instead."""
        with closing(self._connect()) as db:
            cursor = db.execute(
                "SELECT source_type, source_id, journal_position, payload "
                "FROM pc_sources WHERE scope_id = ? ORDER BY journal_position",
                [scope_id],
            )
            while batch := cursor.fetchmany(2000):
                for source_type, source_id, position, payload in batch:
                    try:
                        yield ReferenceSource(
                            scope_id=scope_id,
                            source_id=source_id,
                            position=int(position),
                            value=_value(source_type, source_id, payload),
                        )
                    except (UnsupportedRow, RowUnreadable) as exc:
                        if unsupported is not None:
                            unsupported.append(
                                Unsupported(scope_id, source_type, source_id, str(exc))
                            )


class UnsupportedRow(Exception):
    """A row of a kind this service does not keep (skipped and named)."""


class RowUnreadable(Exception):
    """A ``pc_sources`` payload that is not a native powercontext-source-v1 value."""


# What a reference row was created by: which of our operations takes the same request.
CAPTURED, NOTE, CREATED = "capture_content", "capture_working_note", "create_source"


@dataclass(frozen=True)
class SourceRequest:
    """The request our API would take to capture a reference row again."""

    operation: str  # CAPTURED, NOTE or CREATED
    body: dict[str, Any]
    handoff_receipt: bool  # written by the reference server itself


def source_request(
    scope_id: str, source_type: str, source_id: str, payload: bytes | str
) -> SourceRequest:
    """The row's request (raises ``RowUnreadable``; ``UnsupportedRow`` for a source
    type other than ``content``). Values are as stored: nothing is checked here."""
    if source_type != CONTENT:
        raise UnsupportedRow(f"source type {source_type!r} (only 'content' is kept)")
    try:
        text = payload.decode("utf-8") if isinstance(payload, bytes) else payload
        document = json.loads(text, parse_float=request_float)
    except (TypeError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise RowUnreadable(f"unreadable payload ({exc})") from None
    if not isinstance(document, dict) or document.get("encoding") != ENCODING:
        raise RowUnreadable("payload encoding is not powercontext-source-v1")
    value = document.get("value")
    if document.get("representation") != "native" or not isinstance(value, dict):
        raise RowUnreadable("payload representation is not native")
    receipt = value.get("handoff_receipt") is True
    if value.get("wire_content_present") is True:
        body = {"source_type": CONTENT, "content": value.get("wire_content")}
        return SourceRequest(CREATED, body, receipt)
    metadata = value.get("metadata")
    base = {
        "scope_id": scope_id,
        "source_id": source_id,
        "content": value.get("content"),
    }
    if value.get("working_note") is not True:
        return SourceRequest(CAPTURED, {**base, "metadata": metadata}, receipt)
    if not isinstance(metadata, dict):
        raise RowUnreadable("a working note's metadata is not an object")
    fields = ("session_id", "note_kind", "expires_at")
    note = {name: metadata[name] for name in fields if name in metadata}
    return SourceRequest(NOTE, {**base, **note}, receipt)


def _value(source_type: str, source_id: str, payload: bytes | str) -> SourceValue:
    """The ``SourceValue`` our capture would build for this reference row (the
    row is valid: ``checks.file_problems`` found nothing wrong with it)."""
    request = source_request("", source_type, source_id, payload)
    body = request.body
    if request.operation == CREATED:
        return SourceValue(content=body["content"], metadata={})
    if request.operation == CAPTURED:
        return SourceValue(content=body["content"], metadata=body["metadata"] or {})
    return working_note_value(
        content=body["content"],
        session_id=body["session_id"],
        note_kind=body["note_kind"],
        expires_at=aware_datetime(body.get("expires_at")),
    )


def aware_datetime(text: str | None) -> datetime | None:
    if text is None:
        return None
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"expires_at {text!r} has no time zone")
    return moment


def _parents_first(scopes: dict[str, ReferenceScope]) -> list[ReferenceScope]:
    """Scopes ordered so that a parent or referenced scope comes before its users."""
    ordered: list[ReferenceScope] = []
    placed: set[str] = set()

    def place(scope_id: str, trail: tuple[str, ...]) -> None:
        if scope_id in placed or scope_id not in scopes or scope_id in trail:
            return
        scope = scopes[scope_id]
        for needed in [scope.parent_scope_id, *scope.context_references]:
            if needed is not None:
                place(needed, (*trail, scope_id))
        placed.add(scope_id)
        ordered.append(scope)

    for scope_id in scopes:
        place(scope_id, ())
    return ordered
