"""Purge: tombstone Working Notes unavailable for longer than an age, and erase the
notes of envelopes of sessions closed for longer than it (spec/handoff.md 3).

A note is a candidate when it was already ``expired`` or ``closed`` at the
cutoff (``now - older_than``) by the registry's one availability rule
(``sources.availability``). A held candidate (its scope or its session) is
skipped, and so is one pinned by a committed handoff revision (its lineage):
purge never makes a committed citation unavailable.

Bounded work: candidates are taken in batches of ``batch`` ids, each batch in a
short durable transaction that locks only its own rows (``FOR UPDATE SKIP
LOCKED`` on PostgreSQL) and tombstones those not yet tombstones. Two purges
running at once (cron on two servers) split the rows between them and never
tombstone one twice; the counts of each say what it did. No table lock, no
transaction longer than a batch. Envelopes are erased one per transaction,
under their row lock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone

from handoffs.models import HandoffLineage
from powercontext.principals import Principal
from sessions_app.models import SessionEnvelope
from sessions_app.services import envelope_notes_erase, notes_kept_condition
from sources.availability import Availability, availability_condition
from sources.models import ContentSource, SessionClosure
from sources.selectors import scope_require
from sources.services import sources_tombstone

from ..identifiers import new_id
from ..models import PurgeRun
from ..selectors import held_condition

BATCH = 500
Progress = Callable[[int], None]


@dataclass(frozen=True)
class PurgeResult:
    run_id: str
    dry_run: bool
    purged: int
    skipped_held: int
    skipped_cited: int
    envelopes_cleared: int


@dataclass(frozen=True)
class _Plan:
    """What one run looks at: its candidates and the envelopes to erase."""

    candidates: QuerySet[ContentSource]
    envelopes: QuerySet[SessionEnvelope]


def purge_candidates(*, scope_id: str | None, cutoff: datetime) -> QuerySet:
    """Notes expired or closed at ``cutoff`` and not tombstones, in ``scope_id``
    (every scope when None)."""
    notes = ContentSource.objects.filter(
        availability_condition(Availability.EXPIRED, cutoff)
        | availability_condition(Availability.CLOSED, cutoff),
        is_working_note=True,
    )
    return notes if scope_id is None else notes.filter(scope_id=scope_id)


def purge_run(
    *,
    principal: Principal,
    scope_id: str | None,
    older_than: timedelta,
    dry_run: bool,
    request_id: str = "",
    batch: int = BATCH,
    progress: Progress | None = None,
    now: datetime | None = None,
) -> PurgeResult:
    """Purge (or, ``dry_run``, count what a purge would do) and record the run.

    ``progress`` is called with the number of notes each batch handled (the
    command's progress bar). Raises ``ScopeNotFound`` for an unknown
    ``scope_id``. Counts are of notes: ``purged`` tombstoned by this run (a dry
    run: those it would), ``skipped_held`` and ``skipped_cited`` candidates it
    left alone; ``envelopes_cleared`` envelopes whose notes it erased.
    """
    started_at = timezone.now()
    now = now or started_at
    if scope_id is not None:
        scope_require(scope_id=scope_id)
    cutoff = now - older_than
    plan = _plan(scope_id, cutoff)
    held = plan.candidates.filter(held_condition())
    cited = plan.candidates.filter(~held_condition(), _cited())
    purgeable = plan.candidates.filter(~held_condition(), ~_cited())
    run_id = new_id("run")
    skipped_held, skipped_cited = held.count(), cited.count()
    if dry_run:
        purged, envelopes = purgeable.count(), plan.envelopes.count()
    else:
        purged = _tombstone_all(purgeable, run_id, now, batch, progress)
        envelopes = _erase_envelopes(plan.envelopes, principal, request_id)
    result = PurgeResult(
        run_id, dry_run, purged, skipped_held, skipped_cited, envelopes
    )
    PurgeRun.objects.create(
        scope_id=scope_id,
        older_than_seconds=int(older_than.total_seconds()),
        cutoff=cutoff,
        started_by=principal.name,
        started_at=started_at,
        finished_at=timezone.now(),
        request_id=request_id,
        **vars(result),
    )
    return result


def _plan(scope_id: str | None, cutoff: datetime) -> _Plan:
    closed = SessionClosure.objects.filter(
        scope_id=OuterRef("scope_id"),
        session_id=OuterRef("session_id"),
        closed_at__lte=cutoff,
    )
    envelopes = SessionEnvelope.objects.filter(
        Exists(closed), notes_kept_condition()
    ).exclude(held_condition())
    if scope_id is not None:
        envelopes = envelopes.filter(scope_id=scope_id)
    return _Plan(purge_candidates(scope_id=scope_id, cutoff=cutoff), envelopes)


def _cited() -> Q:
    return Q(Exists(HandoffLineage.objects.filter(source_id=OuterRef("pk"))))


def _tombstone_all(
    purgeable: QuerySet[ContentSource],
    run_id: str,
    now: datetime,
    batch: int,
    progress: Progress | None,
) -> int:
    """Tombstone ``purgeable`` in batches by ascending id; the count changed."""
    purged, after = 0, 0
    while True:
        with transaction.atomic(durable=True):
            ids = list(
                purgeable.filter(pk__gt=after)
                .order_by("pk")
                .select_for_update(skip_locked=True)
                .values_list("pk", flat=True)[:batch]
            )
            if not ids:
                return purged
            purged += sources_tombstone(ids=ids, run_id=run_id, now=now)
        after = ids[-1]
        if progress is not None:
            progress(len(ids))


def _erase_envelopes(
    envelopes: QuerySet[SessionEnvelope], principal: Principal, request_id: str
) -> int:
    """Erase the notes of each of ``envelopes``, one transaction each, read in
    batches by ascending id."""
    cleared, after = 0, 0
    while batch := list(envelopes.filter(pk__gt=after).order_by("pk")[:BATCH]):
        for envelope in batch:
            with transaction.atomic(durable=True):
                cleared += envelope_notes_erase(
                    envelope=envelope,
                    digests=None,
                    principal=principal,
                    request_id=request_id,
                )
        after = batch[-1].pk
    return cleared
