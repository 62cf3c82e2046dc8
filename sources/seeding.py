"""Bulk seeding of a scope: N Sources exactly as capture would have stored them.

Rows come from ``sources.rows.SourceRow.of`` - the one builder capture uses -
so a seeded identity replays and conflicts like a captured one, with its
``accepted`` attempt and a gap-free position taken from the scope's journal head.
Each batch is one transaction that locks the head row, writes its rows after the
last position and advances the head, so captures that run during seeding
interleave cleanly. PostgreSQL gets the rows through COPY; other databases
through ``bulk_create``. ``manage.py seed_sources`` is the command around it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import connection, transaction

from powercontext.principals import SEED_PRINCIPAL

from .digests import SourceValue
from .models import CaptureAttempt, ContentSource, SourceJournalHead, WorkingNoteKind
from .rows import ATTEMPT_FIELDS, SOURCE_FIELDS, SourceRow

# The number part of a seeded id: how PREFIX<n> is written for n >= 1.
_SEED_NUMBER = re.compile(r"[1-9][0-9]*")
COLLISIONS_SHOWN = 3


@dataclass(frozen=True)
class SeedPlan:
    scope_id: str
    prefix: str
    count: int
    notes: int  # exactly this many of the ``count`` Sources are Working Notes
    sessions: int
    request_id: str
    created_at: datetime

    def row(self, number: int) -> SourceRow:
        """Source ``number`` (1..count) as capture would build it."""
        return SourceRow.of(
            scope_id=self.scope_id,
            source_id=f"{self.prefix}{number}",
            value=_note_value(self, number)
            if self.is_note(number)
            else _plain_value(number),
            principal=SEED_PRINCIPAL,
            request_id=self.request_id,
            now=self.created_at,
        )

    def is_note(self, number: int) -> bool:
        """Whether Source ``number`` (1..count) is a Working Note.

        Bresenham's rule: the running total of notes after Source n is
        floor(n * notes / count), so Source n is a note when that total steps up.
        That gives exactly ``notes`` notes, evenly spread, whatever the batches.
        """
        return (
            number * self.notes // self.count > (number - 1) * self.notes // self.count
        )


def seed_collisions(*, scope_id: str, prefix: str, count: int) -> list[str]:
    """Up to ``COLLISIONS_SHOWN`` ids among PREFIX1..PREFIX<count> the scope holds.

    Reads the scope's ids that start with the prefix (LIKE; case-insensitive on
    SQLite, so each is compared again here, byte for byte). This only spares the
    user a half-done run: the identity constraint still decides at insert time.
    """
    found: list[str] = []
    candidates = (
        ContentSource.objects.filter(
            scope_id=scope_id, source_type="content", source_id__startswith=prefix
        )
        .order_by("position")
        .values_list("source_id", flat=True)
    )
    for source_id in candidates.iterator(chunk_size=2000):
        number = source_id[len(prefix) :]
        if (
            source_id.startswith(prefix)
            and _SEED_NUMBER.fullmatch(number)
            and int(number) <= count
        ):
            found.append(source_id)
            if len(found) == COLLISIONS_SHOWN:
                break
    return found


def seed_batch(plan: SeedPlan, *, offset: int, size: int) -> int:
    """Write Sources number offset+1 .. offset+size; return the first position.

    Locks the scope's journal head for the transaction, so positions stay
    gap-free and unique alongside concurrent captures. Lets the identity
    constraint's ``IntegrityError`` through when a capture took one of the ids.
    """
    with transaction.atomic(durable=True):
        head = SourceJournalHead.objects.select_for_update().get(scope_id=plan.scope_id)
        first = head.last_position + 1
        rows = [plan.row(offset + index + 1) for index in range(size)]
        if connection.vendor == "postgresql":
            _copy(
                ContentSource._meta.db_table,
                ("position", *SOURCE_FIELDS),
                (
                    (position, *row.values())
                    for position, row in enumerate(rows, start=first)
                ),
            )
            _copy(
                CaptureAttempt._meta.db_table,
                ATTEMPT_FIELDS,
                (tuple(vars(row.accepted_attempt()).values()) for row in rows),
            )
        else:
            ContentSource.objects.bulk_create(
                ContentSource(position=position, **vars(row))
                for position, row in enumerate(rows, start=first)
            )
            CaptureAttempt.objects.bulk_create(
                CaptureAttempt(**vars(row.accepted_attempt())) for row in rows
            )
        # QuerySet.update on the head: it is not an immutable registry row.
        SourceJournalHead.objects.filter(scope_id=plan.scope_id).update(
            last_position=first + size - 1
        )
    return first


def _note_value(plan: SeedPlan, number: int) -> SourceValue:
    session_id = f"seed-session-{number % plan.sessions}"
    note_kind = WorkingNoteKind.values[number % len(WorkingNoteKind.values)]
    return SourceValue(
        content=(
            f"Seeded note {number}: inspected the module behind it; the cache is "
            "rebuilt on every call, which explains the slow first page."
        ),
        # The same descriptive metadata working_note_capture stores.
        metadata={
            "kind": "working_note",
            "session_id": session_id,
            "note_kind": note_kind,
        },
        working_note=True,
        session_id=session_id,
        note_kind=note_kind,
    )


def _plain_value(number: int) -> SourceValue:
    return SourceValue(
        content=(
            f"Seeded source {number}: design notes for the journal, positions are "
            "handed out by the head row of the scope in the capture transaction."
        ),
        metadata={"origin": "seed", "n": number},
    )


def _copy(table: str, columns: tuple[str, ...], rows: Iterable[tuple]) -> None:
    """COPY ``rows`` into ``table`` through the connection's psycopg cursor.

    Errors come out as Django's (``IntegrityError`` ...), as from any query.
    """
    statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
    with (
        connection.cursor() as wrapper,
        connection.wrap_database_errors,
        wrapper.cursor.copy(statement) as copy,
    ):
        for row in rows:
            copy.write_row(row)
