"""Purge: tombstone Working Notes unavailable for longer than an age, and erase the
notes of envelopes of sessions closed for longer than it (spec/handoff.md 3).

A note is a candidate when it was already ``expired`` or ``closed`` at the
cutoff (``now - older_than``) by the registry's one availability rule
(``sources.availability``). A held candidate (its scope or its session) is
skipped, and so is one pinned by a committed handoff revision (its lineage):
purge never makes a committed citation unavailable.

No copy of a purged note survives: the same text kept as working notes by any
envelope of its scope (a note bridged from the envelope, live or in a revision,
open session or closed) is erased in the transaction that tombstones the note.
So a note whose text an envelope under a legal hold keeps is skipped as held:
the purge erases every copy of a note or none.

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
from powercontext.canonical import canonical_sha256
from powercontext.jsonvalues import stored_json_loads
from powercontext.principals import Principal
from sessions_app.models import EnvelopeValue, SessionEnvelope
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
        purged, held_copies = _count_all(purgeable, batch)
        envelopes = plan.envelopes.count()
    else:
        erasure = _Erasure(principal, request_id, run_id, now)
        purged, held_copies = _tombstone_all(purgeable, erasure, batch, progress)
        envelopes = _erase_envelopes(plan.envelopes, principal, request_id)
    result = PurgeResult(
        run_id,
        dry_run,
        purged,
        skipped_held + held_copies,
        skipped_cited,
        envelopes,
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


@dataclass(frozen=True)
class _Erasure:
    """Who erases, and the run the tombstones record."""

    principal: Principal
    request_id: str
    run_id: str
    now: datetime


@dataclass(frozen=True)
class _Batch:
    """One batch of candidates split by their envelope copies: ``purge`` (ids)
    and the unheld envelopes keeping their texts, or ``held`` (a held envelope
    keeps a copy, so the note stays whole)."""

    purge: list[int]
    held: list[int]
    copies: dict[int, set[str]]  # envelope id -> the notes digests to erase


def _split(rows: list[tuple[int, str, str | None]]) -> _Batch:
    """Split ``(pk, scope_id, content)`` rows by the envelopes of their scope that
    keep the same text as working notes (live or in a revision). Two queries."""
    texts: dict[tuple[str, str], list[int]] = {}
    for pk, scope_id, content in rows:
        if content is not None:
            digest = canonical_sha256(stored_json_loads(content))
            texts.setdefault((scope_id, digest), []).append(pk)
    copies = _notes_copies(texts)
    held_envelopes = set(
        SessionEnvelope.objects.filter(pk__in=sorted(set().union(*copies.values())))
        .filter(held_condition())
        .values_list("pk", flat=True)
    )
    held_texts = {text for text, ids in copies.items() if ids & held_envelopes}
    held_ids = {pk for text in held_texts for pk in texts[text]}
    erase: dict[int, set[str]] = {}
    for text, envelope_ids in copies.items():
        for envelope_id in envelope_ids if text not in held_texts else ():
            erase.setdefault(envelope_id, set()).add(text[1])
    purge = [pk for pk, _, _ in rows if pk not in held_ids]
    return _Batch(purge=purge, held=sorted(held_ids), copies=erase)


def _notes_copies(
    texts: dict[tuple[str, str], list[int]],
) -> dict[tuple[str, str], set[int]]:
    """For each ``(scope_id, digest)``, the ids of that scope's envelopes keeping
    the digest as notes (only texts with a copy). One query."""
    if not texts:
        return {}
    stored = EnvelopeValue.objects.filter(
        for_notes=True,
        digest__in=sorted({digest for _, digest in texts}),
        envelope__scope_id__in=sorted({scope_id for scope_id, _ in texts}),
    ).values_list("envelope__scope_id", "digest", "envelope_id")
    copies: dict[tuple[str, str], set[int]] = {}
    for scope_id, digest, envelope_id in stored:
        if (scope_id, digest) in texts:
            copies.setdefault((scope_id, digest), set()).add(envelope_id)
    return copies


def _rows(candidates: QuerySet[ContentSource]) -> QuerySet:
    return candidates.order_by("pk").values_list("pk", "scope_id", "content")


def _count_all(purgeable: QuerySet[ContentSource], batch: int) -> tuple[int, int]:
    """A dry run: ``(would purge, held by an envelope copy)``, changing nothing."""
    purged = held = after = 0
    while rows := list(_rows(purgeable.filter(pk__gt=after))[:batch]):
        split = _split(rows)
        purged, held = purged + len(split.purge), held + len(split.held)
        after = rows[-1][0]
    return purged, held


def _tombstone_all(
    purgeable: QuerySet[ContentSource],
    erasure: _Erasure,
    batch: int,
    progress: Progress | None,
) -> tuple[int, int]:
    """Tombstone ``purgeable`` in batches by ascending id, each with its envelope
    copies; ``(tombstoned, held by an envelope copy)``."""
    purged = held = after = 0
    while True:
        with transaction.atomic(durable=True):
            rows = list(
                _rows(purgeable.filter(pk__gt=after)).select_for_update(
                    skip_locked=True
                )[:batch]
            )
            if not rows:
                return purged, held
            split = _split(rows)
            # Envelopes first: their lock comes before a Source row's change, the
            # order of every envelope write that captures a note.
            _erase_copies(split.copies, erasure)
            purged += sources_tombstone(
                ids=split.purge, run_id=erasure.run_id, now=erasure.now
            )
            held += len(split.held)
        after = rows[-1][0]
        if progress is not None:
            progress(len(rows))


def _erase_copies(copies: dict[int, set[str]], erasure: _Erasure) -> None:
    """In the caller's transaction: erase the digests from each envelope, in id
    order (each under its row lock, taken by the envelope write)."""
    for envelope in SessionEnvelope.objects.filter(pk__in=sorted(copies)).order_by(
        "pk"
    ):
        envelope_notes_erase(
            envelope=envelope,
            digests=copies[envelope.pk],
            principal=erasure.principal,
            request_id=erasure.request_id,
        )


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
