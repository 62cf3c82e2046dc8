"""The capture write: look up the identity, or take the scope's next position and
insert the Source.

Positions are gap-free per scope because the journal head row is updated (and so
locked) in the same short transaction as the Source insert and its ``accepted``
attempt. If the insert fails - typically the identity was captured concurrently -
the whole transaction rolls back, the head included, so no position is consumed.

On PostgreSQL the lookup and the three writes are one statement (a
data-modifying CTE): one round trip per capture, and an identity that already
exists never touches the head. SQLite has no data-modifying CTEs; there the
lookup and the writes run as separate statements inside the caller's IMMEDIATE
transaction. See docs/decisions/0002-position-allocator.md.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction

from powercontext.db.cursors import prepared_cursor

from .exceptions import ScopeNotFound
from .models import CaptureAttempt, CaptureOutcome, ContentSource, SourceJournalHead


@dataclass(frozen=True)
class NewSource:
    """A fully prepared Source row, minus its position."""

    scope_id: str
    source_type: str
    source_id: str
    content: str
    metadata: dict
    is_working_note: bool
    session_id: str | None
    note_kind: str | None
    expires_at: datetime | None
    value_digest: str
    content_digest: str
    created_at: datetime
    created_by: str
    request_id: str


_HEAD = SourceJournalHead._meta.db_table
_SOURCE = ContentSource._meta.db_table
_ATTEMPT = CaptureAttempt._meta.db_table

_POSTGRES_CAPTURE = f"""
WITH arg (
    scope_id, source_type, source_id, content, metadata, is_working_note,
    session_id, note_kind, expires_at, value_digest, content_digest, created_at,
    created_by, request_id
) AS (
    VALUES (%s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s::timestamptz, %s, %s,
            %s::timestamptz, %s, %s)
), existing AS (
    SELECT s.position, s.value_digest FROM {_SOURCE} s, arg
    WHERE s.scope_id = arg.scope_id AND s.source_type = arg.source_type
      AND s.source_id = arg.source_id
), head AS (
    UPDATE {_HEAD} h SET last_position = h.last_position + 1
    FROM arg
    WHERE h.scope_id = arg.scope_id AND NOT EXISTS (SELECT 1 FROM existing)
    RETURNING h.last_position
), source AS (
    INSERT INTO {_SOURCE} (
        scope_id, source_type, source_id, position, content, metadata,
        is_working_note, session_id, note_kind, expires_at, value_digest,
        content_digest, created_at, created_by, request_id
    )
    SELECT arg.scope_id, arg.source_type, arg.source_id, head.last_position,
           arg.content, arg.metadata, arg.is_working_note, arg.session_id,
           arg.note_kind, arg.expires_at, arg.value_digest, arg.content_digest,
           arg.created_at, arg.created_by, arg.request_id
    FROM head, arg
    RETURNING position
), attempt AS (
    INSERT INTO {_ATTEMPT} (
        scope_id, source_type, source_id, outcome, reason, value_digest,
        principal, request_id, at
    )
    SELECT arg.scope_id, arg.source_type, arg.source_id,
           '{CaptureOutcome.ACCEPTED.value}', NULL, arg.value_digest, arg.created_by,
           arg.request_id, arg.created_at
    FROM source, arg
)
SELECT position, NULL FROM source
UNION ALL
SELECT position, value_digest FROM existing
"""

_ADVANCE_HEAD = (
    f"UPDATE {_HEAD} SET last_position = last_position + 1 "
    "WHERE scope_id = %s RETURNING last_position"
)


@dataclass(frozen=True)
class JournalOutcome:
    """The identity's position, and the stored value digest if it already existed."""

    position: int
    existing_digest: str | None


def journal_capture(row: NewSource) -> JournalOutcome:
    """Return the existing Source of ``row``'s identity, or append ``row``.

    The write is atomic. Called outside a transaction it is committed before
    this returns: on PostgreSQL the capture is one statement, sent alone, and a
    statement outside a transaction is its own transaction, so the journal head's
    row lock is released by the server the moment the statement commits, never
    held while the client sends ``COMMIT``; SQLite runs its statements in an
    IMMEDIATE transaction. Called inside a caller's transaction (the envelope's
    notes bridge) it joins it in a savepoint, and is kept when the caller commits.

    Raises ``ScopeNotFound`` when the identity does not exist and the scope has
    no journal head. Lets the ``IntegrityError`` of the identity constraint
    propagate when a concurrent capture inserted the identity first (nothing is
    written); the caller classifies that Source as a replay or a conflict.
    """
    capture = (
        _capture_postgres if connection.vendor == "postgresql" else _capture_portable
    )
    if connection.in_atomic_block:
        with transaction.atomic():
            return capture(row)
    if connection.vendor == "postgresql":
        return capture(row)
    with transaction.atomic(durable=True):
        return capture(row)


def _capture_postgres(row: NewSource) -> JournalOutcome:
    params: list[Any] = [
        row.scope_id,
        row.source_type,
        row.source_id,
        row.content,
        json.dumps(row.metadata, ensure_ascii=False),
        row.is_working_note,
        row.session_id,
        row.note_kind,
        row.expires_at,
        row.value_digest,
        row.content_digest,
        row.created_at,
        row.created_by,
        row.request_id,
    ]
    with prepared_cursor() as cursor:
        # Each value is sent once (the arg row), not once per use in the CTE.
        cursor.execute(_POSTGRES_CAPTURE, params)
        found = cursor.fetchone()
    if found is None:
        raise ScopeNotFound()
    return JournalOutcome(position=int(found[0]), existing_digest=found[1])


def _capture_portable(row: NewSource) -> JournalOutcome:
    existing = (
        ContentSource.objects.filter(
            scope_id=row.scope_id, source_type=row.source_type, source_id=row.source_id
        )
        .values_list("position", "value_digest")
        .first()
    )
    if existing is not None:
        return JournalOutcome(position=existing[0], existing_digest=existing[1])
    with connection.cursor() as cursor:
        cursor.execute(_ADVANCE_HEAD, [row.scope_id])
        found = cursor.fetchone()
    if found is None:
        raise ScopeNotFound()
    position = int(found[0])
    ContentSource.objects.create(position=position, **row.__dict__)
    CaptureAttempt.objects.create(
        scope_id=row.scope_id,
        source_type=row.source_type,
        source_id=row.source_id,
        outcome=CaptureOutcome.ACCEPTED,
        reason=None,
        value_digest=row.value_digest,
        principal=row.created_by,
        request_id=row.request_id,
        at=row.created_at,
    )
    return JournalOutcome(position=position, existing_digest=None)
