"""Writing an import plan, and the verification pass that re-reads it.

Scopes are written first, all in one transaction (parents before children,
references after every scope exists). Sources follow scope by scope in batches,
each batch one durable transaction that locks the scope's journal head, moves
it to at least the file's highest position (so a capture made meanwhile lands
after the imported range), and inserts the batch's new rows at their original
positions with an ``accepted`` attempt each - PostgreSQL through COPY, other
databases through ``bulk_create``. A batch that meets an identity captured
meanwhile fails on the identity constraint and nothing of it is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from itertools import islice

from django.db import connection, transaction
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from ..models import (
    CaptureAttempt,
    ContentSource,
    Scope,
    ScopeContextReference,
    ScopeExternalReference,
    SourceJournalHead,
)
from ..rows import ATTEMPT_FIELDS, CONTENT, SOURCE_FIELDS, SourceRow
from ..services.scopes import scope_request_digest
from .plan import ImportPlan, ScopePlan, source_row
from .reference import ReferenceDatabase, ReferenceScope

BATCH = 5000


def scopes_write(plan: ImportPlan, *, principal: str, request_id: str) -> int:
    """Create the plan's new scopes with their references and journal heads."""
    new = [scope_plan for scope_plan in plan.scopes if not scope_plan.exists]
    now = timezone.now()
    with transaction.atomic(durable=True):
        for scope_plan in new:
            _scope_create(scope_plan.scope, principal, request_id, now)
        for scope_plan in new:
            scope = scope_plan.scope
            ScopeContextReference.objects.bulk_create(
                ScopeContextReference(
                    scope_id=scope.scope_id, ordinal=index, referenced_id=target
                )
                for index, target in enumerate(scope.context_references)
            )
            ScopeExternalReference.objects.bulk_create(
                ScopeExternalReference(
                    scope_id=scope.scope_id, ordinal=index, kind=kind, value=value
                )
                for index, (kind, value) in enumerate(scope.external_references)
            )
            SourceJournalHead.objects.create(scope_id=scope.scope_id)
    return len(new)


def _scope_create(
    scope: ReferenceScope, principal: str, request_id: str, now: datetime
) -> None:
    Scope.objects.create(
        scope_id=scope.scope_id,
        title=scope.title,
        summary=scope.summary,
        parent_id=scope.parent_scope_id,
        version=scope.version,
        idempotency_key=scope.idempotency_key,
        request_digest=scope_request_digest(
            title=scope.title,
            summary=scope.summary,
            parent_scope_id=scope.parent_scope_id,
            context_references=scope.context_references,
            external_references=scope.external_references,
        ),
        created_by=principal,
        created_at=now,
        request_id=request_id,
    )


def sources_write(
    reference: ReferenceDatabase,
    scope_plan: ScopePlan,
    *,
    principal: str,
    request_id: str,
    advance: Callable[[int], object] = lambda count: None,
) -> int:
    """Insert the scope's new Sources at their positions; returns how many."""
    scope_id = scope_plan.scope.scope_id
    present = set(
        ContentSource.objects.filter(scope_id=scope_id, source_type=CONTENT)
        .values_list("source_id", flat=True)
        .iterator(2000)
    )
    written = 0
    sources = reference.sources(scope_id)
    while batch := list(islice(sources, BATCH)):
        rows = [
            (
                source.position,
                source_row(source, principal=principal, request_id=request_id),
            )
            for source in batch
            if source.source_id not in present
        ]
        _batch_write(scope_id, rows, scope_plan.last_position)
        written += len(rows)
        advance(len(batch))
    if written == 0:  # nothing new: the head still covers the file's positions
        _batch_write(scope_id, [], scope_plan.last_position)
    return written


def _batch_write(
    scope_id: str, rows: list[tuple[int, SourceRow]], last_position: int
) -> None:
    with transaction.atomic(durable=True):
        SourceJournalHead.objects.select_for_update().get(scope_id=scope_id)
        SourceJournalHead.objects.filter(scope_id=scope_id).update(
            last_position=Greatest(F("last_position"), last_position)
        )
        if not rows:
            return
        if connection.vendor == "postgresql":
            _copy(
                ContentSource._meta.db_table,
                ("position", *SOURCE_FIELDS),
                ((position, *row.values()) for position, row in rows),
            )
            _copy(
                CaptureAttempt._meta.db_table,
                ATTEMPT_FIELDS,
                (tuple(vars(row.accepted_attempt()).values()) for _, row in rows),
            )
            return
        ContentSource.objects.bulk_create(
            (ContentSource(position=position, **vars(row)) for position, row in rows),
            batch_size=500,
        )
        CaptureAttempt.objects.bulk_create(
            (CaptureAttempt(**vars(row.accepted_attempt())) for _, row in rows),
            batch_size=500,
        )


def _copy(table: str, columns: tuple[str, ...], rows: Iterable[tuple]) -> None:
    """COPY ``rows`` into ``table`` (errors come out as Django's)."""
    statement = f"COPY {table} ({', '.join(columns)}) FROM STDIN"
    with (
        connection.cursor() as wrapper,
        connection.wrap_database_errors,
        wrapper.cursor.copy(statement) as copy,
    ):
        for row in rows:
            copy.write_row(row)


@dataclass(frozen=True)
class Mismatch:
    scope_id: str
    source_id: str
    reason: str


# What must be equal between a Source here and the file's, column by column.
_COMPARED = (
    "position",
    "content",
    "metadata",
    "is_working_note",
    "session_id",
    "note_kind",
    "expires_at",
    "value_digest",
    "content_digest",
)


def import_verify(
    reference: ReferenceDatabase,
    plan: ImportPlan,
    *,
    advance: Callable[[int], object] = lambda count: None,
) -> Iterator[Mismatch]:
    """Re-read every Source of the file here and yield each difference.

    Also checks that each scope's journal head is past the file's highest
    position and that positions 1..that position are all taken (gap-free).
    """
    for scope_plan in plan.scopes:
        scope_id = scope_plan.scope.scope_id
        sources = reference.sources(scope_id)
        while batch := list(islice(sources, BATCH)):
            stored = {
                row["source_id"]: row
                for row in ContentSource.objects.filter(
                    scope_id=scope_id,
                    source_type=CONTENT,
                    source_id__in=[source.source_id for source in batch],
                ).values("source_id", *_COMPARED)
            }
            for source in batch:
                expected = source_row(source, principal="verify", request_id="verify")
                found = stored.get(source.source_id)
                if found is None:
                    yield Mismatch(scope_id, source.source_id, "missing here")
                    continue
                wanted = {**vars(expected), "position": source.position}
                for column in _COMPARED:
                    if found[column] != wanted[column]:
                        yield Mismatch(scope_id, source.source_id, f"{column} differs")
            advance(len(batch))
        yield from _journal_problems(scope_id, scope_plan.last_position)


def _journal_problems(scope_id: str, last_position: int) -> Iterator[Mismatch]:
    head = SourceJournalHead.objects.get(scope_id=scope_id).last_position
    if head < last_position:
        yield Mismatch(scope_id, "", f"journal head {head} < {last_position}")
    taken = ContentSource.objects.filter(
        scope_id=scope_id, position__lte=last_position
    ).count()
    if taken != last_position:
        yield Mismatch(
            scope_id, "", f"positions 1..{last_position} hold {taken} Sources (gaps)"
        )
