"""Writing an import plan, and the verification pass that re-reads it.

``import_write`` is the whole write: one durable transaction that creates the
new scopes (parents before children, references after every scope exists),
inserts the new Sources scope by scope in batches at their original positions
with an ``accepted`` attempt each - PostgreSQL through COPY, other databases
through ``bulk_create`` - and then verifies every Source of the file against
what is now stored. A difference, or an identity captured here meanwhile (the
identity constraint), rolls all of it back: a failed import leaves the database
as it was. Each scope's journal head is locked from its first batch to the
commit and moved to at least the file's highest position, so a capture into an
existing scope waits for the import and lands after the imported range.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from typing import Any

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


@dataclass(frozen=True)
class Mismatch:
    scope_id: str
    source_id: str
    reason: str


class ImportMismatch(Exception):
    """Verification found differences; the import was rolled back."""

    def __init__(self, mismatches: list[Mismatch]) -> None:
        super().__init__(f"{len(mismatches)} difference(s)")
        self.mismatches = mismatches


Progress = Callable[[str, int], AbstractContextManager[Any]]


def import_write(
    reference: ReferenceDatabase,
    plan: ImportPlan,
    *,
    principal: str,
    request_id: str,
    progress: Progress,
) -> tuple[int, int]:
    """Write ``plan`` and verify it, all in one transaction; returns how many new
    scopes and Sources were written.

    ``progress(name, total)`` opens a progress bar (with ``update``) for the
    ``import`` and ``verify`` passes. Raises ``ImportMismatch`` when the stored
    Sources differ from the file, ``IntegrityError`` when an identity was
    captured here meanwhile; either way nothing is kept.
    """
    with transaction.atomic(durable=True):
        scopes = scopes_write(plan, principal=principal, request_id=request_id)
        written = 0
        with progress("import", plan.file_sources) as bar:
            for scope_plan in plan.scopes:
                written += sources_write(
                    reference,
                    scope_plan,
                    principal=principal,
                    request_id=request_id,
                    advance=bar.update,
                )
        with progress("verify", plan.file_sources) as bar:
            mismatches = list(import_verify(reference, plan, advance=bar.update))
        if mismatches:
            raise ImportMismatch(mismatches)
    return scopes, written


def scopes_write(plan: ImportPlan, *, principal: str, request_id: str) -> int:
    """Create the plan's new scopes with their references and journal heads
    (inside ``import_write``'s transaction)."""
    new = [scope_plan for scope_plan in plan.scopes if not scope_plan.exists]
    now = timezone.now()
    with transaction.atomic():
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
    with transaction.atomic():
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
