"""Redaction of everything a search finds: every matching Source, every copy.

``redact_matching`` answers ``POST /v1/scopes/{scope_id}/redactions``. It plans,
then (unless a dry run) carries the plan out; the dry run answers the plan
itself, so it says exactly what a real run at that moment would erase.

The plan reads the search (``sources.selectors.source_search``) and the live
notes search (``sessions_app.search``) a page at a time, at most
``MATCHES_MAX`` of each per request (``complete`` is false when more matched:
run it again). For each matching Source, its copies are the envelopes whose
notes hold the same text and its own session; a hold on the scope or on any of
those sessions keeps the Source and every copy (reported under ``held``), as
``source_redact`` refuses them. An envelope whose live notes match on their own
is erased unless a hold covers its session or it is the copy of a held Source.

Carrying out: each Source is redacted exactly as ``source_redact`` does (its
tombstone, a ``Redaction`` row with the reason, its envelope copies erased) in a
durable transaction of its own, so no lock is held across the batch; each
envelope-only match is erased in one of its own (a ``notes_erased`` revision of
that envelope records it). A hold set while the run goes on is still respected:
that Source is reported held, and its envelopes (its session's and its copies')
are kept as a held Source's are (``_keep_copies``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.db import transaction
from django.utils import timezone

from powercontext.canonical import canonical_sha256
from powercontext.jsonvalues import stored_json_loads
from powercontext.pages import Page, Position
from powercontext.principals import Principal
from sessions_app.meta_keys import WORKING_NOTES_KEY
from sessions_app.models import SessionEnvelope
from sessions_app.search import envelope_notes_search
from sessions_app.services import envelope_notes_erase, envelopes_holding
from sources.models import ContentSource
from sources.search import SearchQuery
from sources.selectors import SearchFilters, SearchHit, source_search

from ..exceptions import LegalHoldActive
from ..selectors import holds_covering
from .redaction import redact_locked

MATCHES_MAX = 1000
PAGE = 100
Item = TypeVar("Item")


@dataclass
class PlannedSource:
    source_type: str
    source_id: str
    position: int
    pk: int
    session_id: str | None
    copies: list[str]  # sessions of the envelopes holding the same text
    held_sessions: list[str] = field(default_factory=list)
    scope_held: bool = False
    redaction_id: str | None = None


@dataclass
class RedactionRun:
    """What a run erased (or, dry, would erase), and what holds kept."""

    dry_run: bool
    complete: bool
    redacted: list[PlannedSource]
    envelopes: list[str]  # sessions whose live or stored notes are erased
    held: list[PlannedSource]
    held_envelopes: list[str]
    # The digest of the live notes each envelope-only match held when planned:
    # only that text is erased (notes rewritten since are not what matched).
    notes_digests: dict[str, str] = field(default_factory=dict)


def redact_matching(
    *,
    principal: Principal,
    scope_id: str,
    query: SearchQuery,
    reason: str,
    dry_run: bool,
    request_id: str,
) -> RedactionRun:
    """Redact what ``query`` finds in the scope (see the module docstring).

    Raises ``ScopeNotFound``. Never raises for a hold: held matches are
    reported. A dry run writes nothing.
    """
    run = _plan(scope_id, query, dry_run)
    if dry_run:
        return run
    kept_since: list[PlannedSource] = []
    for planned in list(run.redacted):
        if not _redact_one(planned, reason, principal, request_id):
            run.redacted.remove(planned)
            run.held.append(planned)
            kept_since.append(planned)
    _keep_copies(run, kept_since)
    for session_id in _envelope_only(run):
        digest = run.notes_digests.get(session_id)
        if digest is not None:
            _erase_envelope(scope_id, session_id, digest, principal, request_id)
    return run


def _plan(scope_id: str, query: SearchQuery, dry_run: bool) -> RedactionRun:
    now = timezone.now()
    hits, sources_complete = _collect(
        lambda position: source_search(
            scope_id=scope_id,
            query=query,
            filters=SearchFilters(),
            position=position,
            limit=PAGE,
            now=now,
        )
    )
    notes, notes_complete = _collect(
        lambda position: envelope_notes_search(
            scope_id=scope_id, query=query, position=position, limit=PAGE
        )
    )
    planned = _planned_sources(scope_id, hits)
    sessions = {s for p in planned for s in _sessions_of(p)}
    sessions |= {hit.session_id for hit in notes}
    holds = holds_covering(scope_id=scope_id, session_ids=sessions)
    redacted: list[PlannedSource] = []
    held: list[PlannedSource] = []
    for source in planned:
        source.held_sessions = sorted(set(_sessions_of(source)) & set(holds.sessions))
        source.scope_held = holds.scope_held
        (held if source.scope_held or source.held_sessions else redacted).append(source)
    kept = {s for source in held for s in _sessions_of(source)}
    copies = {s for source in redacted for s in source.copies}
    direct = {hit.session_id for hit in notes}
    held_envelopes = sorted(
        s for s in direct if holds.scope_held or s in holds.sessions or s in kept
    )
    return RedactionRun(
        dry_run=dry_run,
        complete=sources_complete and notes_complete,
        redacted=redacted,
        envelopes=sorted((copies | direct) - set(held_envelopes)),
        held=held,
        held_envelopes=held_envelopes,
        notes_digests=_live_digests(scope_id, sorted(direct)),
    )


def _collect(read: Any) -> tuple[list[Any], bool]:
    """Up to ``MATCHES_MAX`` items of a paged read; and whether that was all."""
    items: list[Any] = []
    position: Position | None = None
    while True:
        page: Page[Any] = read(position)
        items.extend(page.items)
        if page.next_position is None:
            return items[:MATCHES_MAX], len(items) <= MATCHES_MAX
        if len(items) >= MATCHES_MAX:
            return items[:MATCHES_MAX], False
        position = page.next_position


def _planned_sources(scope_id: str, hits: list[SearchHit]) -> list[PlannedSource]:
    """The matching Sources with the envelopes holding their text, in rank order."""
    rows = {
        row.source_id: row
        for row in ContentSource.objects.filter(
            scope_id=scope_id,
            source_type__in={hit.source_type for hit in hits},
            source_id__in=[hit.source_id for hit in hits],
            purged_at__isnull=True,
        ).only("pk", "source_id", "session_id", "content")
    }
    planned = []
    for hit in hits:
        row = rows.get(hit.source_id)
        if row is None or row.content is None:  # tombstoned since the search
            continue
        digest = canonical_sha256(stored_json_loads(row.content))
        envelopes = envelopes_holding(scope_id=scope_id, digests={digest})
        planned.append(
            PlannedSource(
                source_type=hit.source_type,
                source_id=hit.source_id,
                position=hit.position,
                pk=row.pk,
                session_id=row.session_id,
                copies=sorted(e.session_id for e in envelopes),
            )
        )
    return planned


def _sessions_of(source: PlannedSource) -> Iterator[str]:
    yield from source.copies
    if source.session_id is not None:
        yield source.session_id


def _redact_one(
    planned: PlannedSource, reason: str, principal: Principal, request_id: str
) -> bool:
    """``source_redact``'s work on one planned Source, in its own transaction;
    False when a hold set since the plan keeps it."""
    try:
        with transaction.atomic(durable=True):
            source = (
                ContentSource.objects.select_for_update()
                .filter(pk=planned.pk)
                .only("pk", "scope_id", "session_id", "content", "purged_at")
                .get()
            )
            if source.purged_at is None and source.content is not None:
                planned.redaction_id = redact_locked(
                    source, reason, principal, request_id
                )
    except LegalHoldActive as held:
        details = held.details or {}
        planned.scope_held = bool(details.get("scope_held"))
        planned.held_sessions = list(details.get("held_sessions", []))
        return False
    return True


def _keep_copies(run: RedactionRun, sources: list[PlannedSource]) -> None:
    """Sources a hold kept during the run keep every copy, as Sources held when
    the run was planned do: their sessions' envelopes leave ``envelopes`` (unless
    a redacted Source's erasure covers them), and those whose live notes matched
    join ``held_envelopes`` - so no envelope-only erasure reaches them."""
    kept = {s for source in sources for s in _sessions_of(source)}
    if not kept:
        return
    erased = {s for source in run.redacted for s in source.copies}
    direct = set(run.notes_digests)
    held = set(run.held_envelopes) | (kept & set(run.envelopes) & direct)
    run.held_envelopes = sorted(held)
    run.envelopes = [
        s for s in run.envelopes if s not in held and (s in erased or s not in kept)
    ]


def _envelope_only(run: RedactionRun) -> list[str]:
    """The envelopes to erase that no redacted Source's erasure covered."""
    copies = {s for source in run.redacted for s in source.copies}
    return [s for s in run.envelopes if s not in copies]


def _erase_envelope(
    scope_id: str, session_id: str, digest: str, principal: Principal, request_id: str
) -> None:
    """Erase the notes text ``digest`` (what matched) from the envelope, unless a
    hold set since the plan covers it. One durable transaction."""
    with transaction.atomic(durable=True):
        if holds_covering(scope_id=scope_id, session_ids=[session_id]):
            return
        envelope = SessionEnvelope.objects.filter(
            scope_id=scope_id, session_id=session_id
        ).first()
        if envelope is None:
            return
        envelope_notes_erase(
            envelope=envelope,
            digests={digest},
            principal=principal,
            request_id=request_id,
        )


def _live_digests(scope_id: str, session_ids: list[str]) -> dict[str, str]:
    """The digest of each envelope's live notes, by session id."""
    envelopes = SessionEnvelope.objects.filter(
        scope_id=scope_id, session_id__in=session_ids
    ).only("session_id", "meta")
    digests = {}
    for envelope in envelopes:
        notes = envelope.meta.get(WORKING_NOTES_KEY)
        if isinstance(notes, str):
            digests[envelope.session_id] = canonical_sha256(notes)
    return digests
