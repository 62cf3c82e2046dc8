"""``manage.py seed_sources``: fill a scope with N Sources quickly, for benchmarks.

Rows are exactly what capture would have stored: canonical content, the value
digest from ``sources.digests.value_digest`` (the one function capture uses, so a
seeded identity replays and conflicts like a captured one), the content digest,
an ``accepted`` capture attempt per Source, and gap-free positions taken from the
scope's journal head. Each batch is one transaction that locks the head row,
writes its rows after the last position and advances the head, so captures that
run during seeding interleave cleanly. PostgreSQL gets the rows through COPY;
other databases through ``bulk_create``.

A share of the Sources (``--notes``) are Working Notes spread over ``--sessions``
session ids and the five note kinds, the rest plain Sources.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction
from django.utils import timezone
from tqdm import tqdm

from powercontext.api.principals import Principal
from sources.digests import SourceValue, canonical_content, content_digest_of
from sources.digests import value_digest as digest_of_value
from sources.models import (
    CaptureAttempt,
    CaptureOutcome,
    ContentSource,
    Scope,
    SourceJournalHead,
    WorkingNoteKind,
)
from sources.services import scope_create

SEED_PRINCIPAL = "seed"
SOURCE_COLUMNS = (
    "scope_id",
    "source_type",
    "source_id",
    "position",
    "content",
    "metadata",
    "is_working_note",
    "session_id",
    "note_kind",
    "expires_at",
    "value_digest",
    "content_digest",
    "created_at",
    "created_by",
    "request_id",
)
ATTEMPT_COLUMNS = (
    "scope_id",
    "source_type",
    "source_id",
    "outcome",
    "reason",
    "value_digest",
    "principal",
    "request_id",
    "at",
)


@dataclass(frozen=True)
class SeedPlan:
    scope_id: str
    prefix: str
    notes_every: int  # every n-th Source is a Working Note; 0 = none
    sessions: int
    request_id: str
    created_at: datetime


class Command(BaseCommand):
    help = (
        "Seed a scope with N Sources (bulk insert; positions and digests as capture)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("count", type=int, help="how many Sources to add")
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--scope", help="an existing scope id")
        target.add_argument(
            "--create-scope",
            metavar="TITLE",
            help="create a new scope with this title and seed it",
        )
        parser.add_argument(
            "--notes",
            type=float,
            default=0.25,
            help="share of Working Notes, 0..1 (default 0.25)",
        )
        parser.add_argument(
            "--sessions",
            type=int,
            default=100,
            help="session ids the notes are spread over (default 100)",
        )
        parser.add_argument("--batch", type=int, default=10_000)
        parser.add_argument(
            "--prefix",
            default=None,
            help="source id prefix (default seed-<random>-), ids are PREFIX<n>",
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        count, batch = options["count"], options["batch"]
        if count < 1 or batch < 1:
            raise CommandError("count and --batch must be at least 1.")
        if not 0 <= options["notes"] <= 1 or options["sessions"] < 1:
            raise CommandError("--notes must be within 0..1 and --sessions >= 1.")
        scope_id = options["scope"] or self._new_scope(options["create_scope"])
        if not Scope.objects.filter(scope_id=scope_id).exists():
            raise CommandError(f"No scope {scope_id!r}.")
        run = secrets.token_hex(4)
        plan = SeedPlan(
            scope_id=scope_id,
            prefix=options["prefix"] or f"seed-{run}-",
            notes_every=round(1 / options["notes"]) if options["notes"] else 0,
            sessions=options["sessions"],
            request_id=secrets.token_hex(8),
            created_at=timezone.now(),
        )
        with tqdm(
            total=count, unit="src", disable=options["no_progress"], smoothing=0.1
        ) as progress:
            done = 0
            while done < count:
                size = min(batch, count - done)
                first = _seed_batch(plan, offset=done, size=size)
                done += size
                progress.update(size)
        self.stderr.write(
            f"Seeded {count} Sources into {scope_id} "
            f"(ids {plan.prefix}1..{plan.prefix}{count}; last position "
            f"{first + size - 1})."
        )
        self.stdout.write(scope_id)

    def _new_scope(self, title: str) -> str:
        scope, _ = scope_create(
            principal=Principal(name=SEED_PRINCIPAL),
            title=title,
            summary=f"Seeded by manage.py seed_sources: {title}",
            parent_scope_id=None,
            context_references=[],
            external_references=[],
            idempotency_key=f"seed-{secrets.token_hex(8)}",
            request_id=secrets.token_hex(8),
        )
        return scope.scope_id


def _seed_batch(plan: SeedPlan, *, offset: int, size: int) -> int:
    """Write Sources number offset+1 .. offset+size; return the first position.

    Locks the scope's journal head for the transaction, so positions stay
    gap-free and unique alongside concurrent captures.
    """
    with transaction.atomic(durable=True):
        head = SourceJournalHead.objects.select_for_update().get(scope_id=plan.scope_id)
        first = head.last_position + 1
        rows = [
            _source_row(plan, number=offset + index + 1, position=first + index)
            for index in range(size)
        ]
        if connection.vendor == "postgresql":
            _copy(ContentSource._meta.db_table, SOURCE_COLUMNS, rows)
            _copy(
                CaptureAttempt._meta.db_table,
                ATTEMPT_COLUMNS,
                (_attempt_row(plan, row) for row in rows),
            )
        else:
            ContentSource.objects.bulk_create(
                ContentSource(**dict(zip(SOURCE_COLUMNS, row, strict=True)))
                for row in rows
            )
            CaptureAttempt.objects.bulk_create(
                CaptureAttempt(
                    **dict(zip(ATTEMPT_COLUMNS, _attempt_row(plan, row), strict=True))
                )
                for row in rows
            )
        # QuerySet.update on the head: it is not an immutable registry row.
        SourceJournalHead.objects.filter(scope_id=plan.scope_id).update(
            last_position=first + size - 1
        )
    return first


def _source_row(plan: SeedPlan, *, number: int, position: int) -> tuple:
    """One ContentSource row in SOURCE_COLUMNS order, built as capture builds it."""
    source_id = f"{plan.prefix}{number}"
    is_note = plan.notes_every > 0 and number % plan.notes_every == 0
    value = _note_value(plan, number) if is_note else _plain_value(number)
    stored = canonical_content(value.content)
    return (
        plan.scope_id,
        "content",
        source_id,
        position,
        stored,
        value.metadata,
        value.working_note,
        value.session_id,
        value.note_kind,
        value.expires_at,
        digest_of_value(value),
        content_digest_of(stored),
        plan.created_at,
        SEED_PRINCIPAL,
        plan.request_id,
    )


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


def _attempt_row(plan: SeedPlan, row: tuple) -> tuple:
    """The ``accepted`` attempt capture writes with every new Source."""
    source = dict(zip(SOURCE_COLUMNS, row, strict=True))
    return (
        plan.scope_id,
        "content",
        source["source_id"],
        CaptureOutcome.ACCEPTED.value,
        None,
        source["value_digest"],
        SEED_PRINCIPAL,
        plan.request_id,
        plan.created_at,
    )


def _copy(table: str, columns: tuple[str, ...], rows: Iterator[tuple] | list) -> None:
    """COPY ``rows`` into ``table`` through the connection's psycopg cursor."""
    statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
    with connection.cursor() as wrapper, wrapper.cursor.copy(statement) as copy:
        for row in rows:
            copy.write_row(
                tuple(
                    json.dumps(value, ensure_ascii=False)
                    if isinstance(value, dict)
                    else value
                    for value in row
                )
            )
