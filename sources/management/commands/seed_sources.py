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
session ids and the five note kinds, the rest plain Sources: exactly
``round(N * share)`` of N (halves to even, as Python rounds), spread evenly.

Every option is checked before anything is written, and so is the prefix: when
any of the ids PREFIX1..PREFIXN already names a Source of the scope, the command
refuses. A capture that takes one of those ids while seeding runs costs only the
batch it lands in (the identity constraint decides); the error says what was
written.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from tqdm import tqdm

from powercontext.cli import decimal_fraction, decimal_integer
from powercontext.db.constraints import violates_constraint
from powercontext.exceptions import RequestValidationError
from powercontext.inputs import validate_input
from powercontext.principals import Principal
from powercontext.text import IDENTITY_MAX_LENGTH, text_problem
from sources.digests import SourceValue, canonical_content, content_digest_of
from sources.digests import value_digest as digest_of_value
from sources.inputs import ScopeCreate
from sources.models import (
    CaptureAttempt,
    CaptureOutcome,
    ContentSource,
    Scope,
    SourceJournalHead,
    WorkingNoteKind,
)
from sources.services import scope_create
from sources.services.capture import IDENTITY_CONSTRAINT

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

    def is_note(self, number: int) -> bool:
        """Whether Source ``number`` (1..count) is a Working Note.

        Bresenham's rule: the running total of notes after Source n is
        floor(n * notes / count), so Source n is a note when that total steps up.
        That gives exactly ``notes`` notes, evenly spread, whatever the batches.
        """
        return (
            number * self.notes // self.count > (number - 1) * self.notes // self.count
        )


class Command(BaseCommand):
    help = (
        "Seed a scope with N Sources (bulk insert; positions and digests as capture)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "count", type=decimal_integer, help="how many Sources to add"
        )
        target = parser.add_mutually_exclusive_group(required=True)
        target.add_argument("--scope", help="an existing scope id")
        target.add_argument(
            "--create-scope",
            metavar="TITLE",
            help="create a new scope with this title and seed it",
        )
        parser.add_argument(
            "--notes",
            type=decimal_fraction,
            default=Fraction(1, 4),
            help="share of Working Notes, 0..1 (default 0.25)",
        )
        parser.add_argument(
            "--sessions",
            type=decimal_integer,
            default=100,
            help="session ids the notes are spread over (default 100)",
        )
        parser.add_argument("--batch", type=decimal_integer, default=10_000)
        parser.add_argument(
            "--prefix",
            default=None,
            help="source id prefix (default seed-<random>-), ids are PREFIX<n>",
        )
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        count, batch = options["count"], options["batch"]
        share = Fraction(options["notes"])
        _check_options(count=count, batch=batch, share=share, options=options)
        prefix = options["prefix"] or f"seed-{secrets.token_hex(4)}-"
        _check_prefix(prefix, count)
        if options["scope"] is not None:
            scope_id = options["scope"]
            _check_scope(scope_id)
            _check_collisions(scope_id=scope_id, prefix=prefix, count=count)
        else:
            scope_id = self._new_scope(options["create_scope"])
        plan = SeedPlan(
            scope_id=scope_id,
            prefix=prefix,
            count=count,
            notes=round(count * share),
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
                first = _seed_batch_or_explain(plan, offset=done, size=size)
                done += size
                progress.update(size)
        self.stderr.write(
            f"Seeded {count} Sources ({plan.notes} Working Notes) into {scope_id} "
            f"(ids {plan.prefix}1..{plan.prefix}{count}; last position "
            f"{first + size - 1})."
        )
        self.stdout.write(scope_id)

    def _new_scope(self, title: str) -> str:
        """Create the scope to seed; its title is checked as the API checks it."""
        problem = text_problem(title)
        if problem:
            raise CommandError(f"Bad --create-scope title: title {problem}.")
        fields = {
            "title": title,
            "summary": f"Seeded by manage.py seed_sources: {title}",
            "idempotency_key": f"seed-{secrets.token_hex(8)}",
        }
        try:
            validate_input(ScopeCreate, fields, where="option")
        except RequestValidationError as invalid:
            problems = "; ".join(
                f"{error['loc'][-1]}: {error['msg']}" for error in invalid.errors
            )
            raise CommandError(f"Bad --create-scope title: {problems}") from None
        scope, _ = scope_create(
            principal=Principal(name=SEED_PRINCIPAL),
            parent_scope_id=None,
            context_references=[],
            external_references=[],
            request_id=secrets.token_hex(8),
            **fields,
        )
        return scope.scope_id


def _check_options(
    *, count: int, batch: int, share: Fraction, options: dict[str, Any]
) -> None:
    """``CommandError`` unless every number is in range (argparse checked syntax)."""
    if count < 1 or batch < 1 or options["sessions"] < 1:
        raise CommandError("count, --batch and --sessions must be at least 1.")
    if not 0 <= share <= 1:
        raise CommandError(f"--notes must be within 0..1, not {float(share)}.")


def _check_prefix(prefix: str, count: int) -> None:
    """``CommandError`` unless PREFIX1..PREFIX<count> are ids capture would accept."""
    problem = text_problem(prefix)
    if problem:
        raise CommandError(f"--prefix {problem}.")
    if prefix != prefix.lstrip():
        raise CommandError("--prefix must not start with whitespace.")
    longest = len(prefix) + len(str(count))
    if longest > IDENTITY_MAX_LENGTH:
        raise CommandError(
            f"--prefix is too long: {prefix}{count} would have {longest} "
            f"characters, source ids have at most {IDENTITY_MAX_LENGTH}."
        )


def _check_scope(scope_id: str) -> None:
    """``CommandError`` unless ``scope_id`` names a scope (no bad text is queried)."""
    if (
        text_problem(scope_id)
        or len(scope_id) > IDENTITY_MAX_LENGTH
        or not Scope.objects.filter(scope_id=scope_id).exists()
    ):
        raise CommandError(f"No scope {scope_id!r}.")


def _check_collisions(*, scope_id: str, prefix: str, count: int) -> None:
    """``CommandError`` when the scope already holds one of PREFIX1..PREFIX<count>.

    Reads the scope's ids that start with the prefix (LIKE; case-insensitive on
    SQLite, so each is compared again here, byte for byte). This only spares the
    user a half-done run: the identity constraint still decides at insert time.
    """
    found: list[str] = []
    candidates = ContentSource.objects.filter(
        scope_id=scope_id, source_type="content", source_id__startswith=prefix
    ).values_list("source_id", flat=True)
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
    if found:
        raise CommandError(
            f"Scope {scope_id} already holds {', '.join(map(repr, found))}"
            f"{' and maybe more' if len(found) == COLLISIONS_SHOWN else ''}, "
            f"which seeding {count} Sources with --prefix {prefix!r} would write "
            "again. Nothing was written; choose another --prefix."
        )


def _seed_batch_or_explain(plan: SeedPlan, *, offset: int, size: int) -> int:
    """``_seed_batch``, with a capture that took one of its ids while seeding
    runs turned into a ``CommandError`` that says what was written."""
    try:
        return _seed_batch(plan, offset=offset, size=size)
    except IntegrityError as exc:
        if not violates_constraint(exc, ContentSource, IDENTITY_CONSTRAINT):
            raise
        raise CommandError(
            f"A Source with an id in {plan.prefix}{offset + 1}.."
            f"{plan.prefix}{offset + size} was captured into {plan.scope_id} "
            f"while seeding ran. {offset} of the {plan.count} Sources were written "
            f"(the batches before); seed the other {plan.count - offset} with "
            "another --prefix."
        ) from None


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
    value = _note_value(plan, number) if plan.is_note(number) else _plain_value(number)
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
            copy.write_row(
                tuple(
                    json.dumps(value, ensure_ascii=False)
                    if isinstance(value, dict)
                    else value
                    for value in row
                )
            )
