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

A Working Note of a closed session is never appended (docs/api.md): its
statement also looks for the session's closure and, when one exists and the
identity does not, writes nothing and says so (``JournalOutcome.closed``). Plain
content keeps the statement without that lookup.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection, transaction

from powercontext.db.cursors import prepared_cursor

from .exceptions import ScopeNotFound
from .models import (
    CaptureAttempt,
    CaptureOutcome,
    ContentSource,
    SessionClosure,
    SourceJournalHead,
)
from .rows import (
    ACCEPTED_ATTEMPT_FROM_SOURCE,
    ATTEMPT_FIELDS,
    SOURCE_FIELDS,
    SourceRow,
)

_HEAD = SourceJournalHead._meta.db_table
_SOURCE = ContentSource._meta.db_table
_ATTEMPT = CaptureAttempt._meta.db_table
_CLOSURE = SessionClosure._meta.db_table
# Each value is sent once, as the one row of ``arg``, and cast where the column
# is not text.
_CASTS = {
    "content_bytes": "::bigint",
    "metadata_bytes": "::bigint",
    "metadata": "::jsonb",
    "expires_at": "::timestamptz",
    "created_at": "::timestamptz",
}
_ARG_VALUES = ", ".join(f"%s{_CASTS.get(name, '')}" for name in SOURCE_FIELDS)
_ACCEPTED = {
    **{
        column: f"arg.{field}" for column, field in ACCEPTED_ATTEMPT_FROM_SOURCE.items()
    },
    "outcome": f"'{CaptureOutcome.ACCEPTED.value}'",
    "reason": "NULL",
}


def _postgres_capture(*, closable: bool) -> str:
    """The capture statement; ``closable`` adds the session closure lookup."""
    closed = (
        f"""), closed AS (
    SELECT 1 FROM {_CLOSURE} c, arg
    WHERE c.scope_id = arg.scope_id AND c.session_id = arg.session_id
      AND NOT EXISTS (SELECT 1 FROM existing)"""
        if closable
        else ""
    )
    open_only = "AND NOT EXISTS (SELECT 1 FROM closed)" if closable else ""
    closed_answer = "UNION ALL\nSELECT 0, 'closed' FROM closed" if closable else ""
    return f"""
WITH arg ({", ".join(SOURCE_FIELDS)}) AS (
    VALUES ({_ARG_VALUES})
), existing AS (
    SELECT s.position, s.value_digest FROM {_SOURCE} s, arg
    WHERE s.scope_id = arg.scope_id AND s.source_type = arg.source_type
      AND s.source_id = arg.source_id
{closed}), head AS (
    UPDATE {_HEAD} h SET last_position = h.last_position + 1
    FROM arg
    WHERE h.scope_id = arg.scope_id AND NOT EXISTS (SELECT 1 FROM existing)
      {open_only}
    RETURNING h.last_position
), source AS (
    INSERT INTO {_SOURCE} (position, {", ".join(SOURCE_FIELDS)})
    SELECT head.last_position, {", ".join(f"arg.{name}" for name in SOURCE_FIELDS)}
    FROM head, arg
    RETURNING position
), attempt AS (
    INSERT INTO {_ATTEMPT} ({", ".join(ATTEMPT_FIELDS)})
    SELECT {", ".join(_ACCEPTED[name] for name in ATTEMPT_FIELDS)}
    FROM source, arg
)
SELECT position, NULL FROM source
UNION ALL
SELECT position, value_digest FROM existing
{closed_answer}
"""


_POSTGRES_CAPTURE = _postgres_capture(closable=False)
_POSTGRES_NOTE_CAPTURE = _postgres_capture(closable=True)
# The marker the note statement answers in place of a digest for a closed session.
_CLOSED = "closed"

_ADVANCE_HEAD = (
    f"UPDATE {_HEAD} SET last_position = last_position + 1 "
    "WHERE scope_id = %s RETURNING last_position"
)


@dataclass(frozen=True)
class JournalOutcome:
    """The identity's position, and the stored value digest if it already existed;
    ``closed`` when a new note was refused because its session is closed."""

    position: int
    existing_digest: str | None
    closed: bool = False


def journal_capture(row: SourceRow) -> JournalOutcome:
    """Return the existing Source of ``row``'s identity, or append ``row``.

    The write is atomic. Called outside a transaction it is committed before
    this returns: on PostgreSQL the capture is one statement, sent alone, and a
    statement outside a transaction is its own transaction, so the journal head's
    row lock is released by the server the moment the statement commits, never
    held while the client sends ``COMMIT``; SQLite runs its statements in an
    IMMEDIATE transaction. Called inside a caller's transaction (the envelope's
    notes bridge) it joins it in a savepoint, and is kept when the caller commits.

    Raises ``ScopeNotFound`` when the identity does not exist and the scope has
    no journal head. A new Working Note of a closed session is not written: the
    outcome says ``closed``. Lets the ``IntegrityError`` of the identity constraint
    propagate when a concurrent capture inserted the identity first (nothing is
    written); the caller classifies that Source as a replay or a conflict.
    """
    postgres = connection.vendor == "postgresql"
    capture = _capture_postgres if postgres else _capture_portable
    if connection.in_atomic_block:
        with transaction.atomic():
            return capture(row)
    if postgres:
        return capture(row)
    with transaction.atomic(durable=True):
        return capture(row)


def _capture_postgres(row: SourceRow) -> JournalOutcome:
    statement = _POSTGRES_NOTE_CAPTURE if row.is_working_note else _POSTGRES_CAPTURE
    with prepared_cursor() as cursor:
        cursor.execute(statement, row.values())
        found = cursor.fetchone()
    if found is None:
        raise ScopeNotFound()
    if found[1] == _CLOSED:
        return JournalOutcome(position=0, existing_digest=None, closed=True)
    return JournalOutcome(position=int(found[0]), existing_digest=found[1])


def _capture_portable(row: SourceRow) -> JournalOutcome:
    existing = (
        ContentSource.objects.filter(
            scope_id=row.scope_id, source_type=row.source_type, source_id=row.source_id
        )
        .values_list("position", "value_digest")
        .first()
    )
    if existing is not None:
        return JournalOutcome(position=existing[0], existing_digest=existing[1])
    if (
        row.is_working_note
        and SessionClosure.objects.filter(
            scope_id=row.scope_id, session_id=row.session_id
        ).exists()
    ):
        return JournalOutcome(position=0, existing_digest=None, closed=True)
    with connection.cursor() as cursor:
        cursor.execute(_ADVANCE_HEAD, [row.scope_id])
        found = cursor.fetchone()
    if found is None:
        raise ScopeNotFound()
    position = int(found[0])
    ContentSource.objects.create(position=position, **vars(row))
    CaptureAttempt.objects.create(**vars(row.accepted_attempt()))
    return JournalOutcome(position=position, existing_digest=None)
