"""Reading a scope, or one session of it, as a bundle: the export selector.

``bundle_lines`` yields the bundle line by line, every record read inside one
read-only transaction - ``REPEATABLE READ`` on PostgreSQL, one read transaction
on SQLite - so the bundle is the scope as of one instant even while captures go
on. Rows are read in keyset batches (``BATCH`` Sources, by position; other rows by
id), never a whole table at once: memory stays bounded by a batch whatever the
scope's size. What a bundle holds, and in which order, is docs/export.md.

A session bundle holds the session's Working Notes and their attempts, its
closure, the holds that cover it (its own and the scope's), the purge runs and
redactions that tombstoned its notes, its envelope, and the handoff revisions
that cite or pin one of its notes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import Q, QuerySet

from handoffs.models import (
    HandoffCitation,
    HandoffHead,
    HandoffLineage,
    HandoffRevision,
    HandoffStatement,
)
from powercontext.version import service_version
from sessions_app.models import EnvelopeRevision, EnvelopeValue, SessionEnvelope
from sources.models import (
    CaptureAttempt,
    ContentSource,
    Scope,
    ScopeContextReference,
    ScopeExternalReference,
    SessionClosure,
    SourceJournalHead,
)
from sources.rows import CONTENT

from ..models import LegalHold, LegalHoldRelease, PurgeRun, Redaction
from .format import COUNTED, FORMAT, FORMAT_VERSION, Chain, json_text, stamp
from .format import stamp_or_none as maybe

BATCH = 500  # Sources per read: each may be up to POWERCONTEXT_MAX_SOURCE_BYTES


@dataclass(frozen=True)
class Selection:
    """The rows of one scope, or of one session of it, that a bundle holds."""

    scope_id: str
    session_id: str | None = None

    def sources(self) -> QuerySet[ContentSource]:
        rows = ContentSource.objects.filter(scope_id=self.scope_id)
        if self.session_id is not None:
            rows = rows.filter(is_working_note=True, session_id=self.session_id)
        return rows

    def attempts(self) -> QuerySet[CaptureAttempt]:
        rows = CaptureAttempt.objects.filter(scope_id=self.scope_id)
        if self.session_id is not None:
            rows = rows.filter(
                source_type=CONTENT,
                source_id__in=self.sources().values("source_id"),
            )
        return rows

    def closures(self) -> QuerySet[SessionClosure]:
        return SessionClosure.objects.filter(scope_id=self.scope_id, **self._session())

    def holds(self) -> QuerySet[LegalHold]:
        rows = LegalHold.objects.filter(scope_id=self.scope_id)
        if self.session_id is not None:
            rows = rows.filter(
                Q(session_id=self.session_id) | Q(session_id__isnull=True)
            )
        return rows

    def purge_runs(self) -> QuerySet[PurgeRun]:
        tombstoned = self.sources().filter(purge_run__isnull=False)
        cited = Q(run_id__in=tombstoned.values("purge_run"))
        if self.session_id is None:
            cited |= Q(scope_id=self.scope_id)
        return PurgeRun.objects.filter(cited)

    def redactions(self) -> QuerySet[Redaction]:
        return Redaction.objects.filter(
            scope_id=self.scope_id, source__in=self.sources().values("pk")
        )

    def envelopes(self) -> QuerySet[SessionEnvelope]:
        return SessionEnvelope.objects.filter(scope_id=self.scope_id, **self._session())

    def envelope_values(self) -> QuerySet[EnvelopeValue]:
        return EnvelopeValue.objects.filter(envelope__in=self.envelopes())

    def envelope_revisions(self) -> QuerySet[EnvelopeRevision]:
        return EnvelopeRevision.objects.filter(envelope__in=self.envelopes())

    def handoff_revisions(self) -> QuerySet[HandoffRevision]:
        rows = HandoffRevision.objects.filter(scope_id=self.scope_id)
        if self.session_id is None:
            return rows
        notes = self.sources().values("source_id")
        pinned = HandoffLineage.objects.filter(source__in=self.sources().values("pk"))
        cited = HandoffCitation.objects.filter(
            kind="source", source_type=CONTENT, source_id__in=notes
        )
        return rows.filter(
            Q(pk__in=pinned.values("revision"))
            | Q(pk__in=cited.values("statement__revision"))
        )

    def handoff_heads(self) -> QuerySet[HandoffHead]:
        if self.session_id is not None:
            return HandoffHead.objects.none()
        return HandoffHead.objects.filter(scope_id=self.scope_id)

    def counts(self) -> dict[str, int]:
        """How many records of each kind the bundle holds (``scope``: 1)."""
        found = {"scope": 1}
        for kind in COUNTED[1:]:
            found[kind] = getattr(self, _QUERIES[kind])().count()
        return found

    def _session(self) -> dict[str, str]:
        return {} if self.session_id is None else {"session_id": self.session_id}


_QUERIES = {
    "source": "sources",
    "attempt": "attempts",
    "closure": "closures",
    "hold": "holds",
    "purge_run": "purge_runs",
    "redaction": "redactions",
    "envelope": "envelopes",
    "envelope_value": "envelope_values",
    "envelope_revision": "envelope_revisions",
    "handoff_revision": "handoff_revisions",
    "handoff_head": "handoff_heads",
}


@dataclass(frozen=True)
class ExportSummary:
    """What an export wrote: records per kind, lines (manifest and trailer
    included) and the trailer's chained digest."""

    counts: dict[str, int]
    records: int
    chain: str


def bundle_lines(
    *,
    selection: Selection,
    created_at: datetime,
    finished: Callable[[ExportSummary], object] = lambda summary: None,
) -> Iterator[bytes]:
    """The bundle of ``selection`` line by line, the trailer last.

    Reads in one snapshot transaction, opened at the first line and closed after
    the last record: REPEATABLE READ, READ ONLY on PostgreSQL when this is the
    outermost transaction. ``finished`` is called with the summary (counts,
    lines, the trailer's chained digest) after that transaction and before the
    trailer is yielded: a bundle whose ``finished`` raised has no trailer. The
    caller checks that the scope exists.
    """
    chain = Chain()
    outermost = connection.get_autocommit()
    with transaction.atomic():
        if outermost:
            _snapshot_begin()
        counts = selection.counts()
        yield chain.line(_manifest(selection, created_at, counts))
        yield chain.line(_scope(selection.scope_id))
        for record in _records(selection):
            yield chain.line(record)
    trailer = chain.trailer()
    finished(ExportSummary(counts=counts, records=chain.lines, chain=chain.digest))
    yield trailer


def _snapshot_begin() -> None:
    """Make the transaction just opened a snapshot (PostgreSQL; SQLite's read
    transaction already is one, from its first read)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")


def _manifest(
    selection: Selection, created_at: datetime, counts: dict[str, int]
) -> dict[str, Any]:
    return {
        "kind": "manifest",
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "service_version": service_version(),
        "scope_id": selection.scope_id,
        "session_id": selection.session_id,
        "created_at": stamp(created_at),
        "counts": counts,
    }


def _scope(scope_id: str) -> dict[str, Any]:
    scope = Scope.objects.get(scope_id=scope_id)
    head = SourceJournalHead.objects.filter(scope_id=scope_id).first()
    return {
        "kind": "scope",
        "scope_id": scope.scope_id,
        "title": scope.title,
        "summary": scope.summary,
        "parent_scope_id": scope.parent_id,
        "context_references": list(
            ScopeContextReference.objects.filter(scope_id=scope_id)
            .order_by("ordinal")
            .values_list("referenced_id", flat=True)
        ),
        "external_references": [
            {"kind": kind, "value": value}
            for kind, value in ScopeExternalReference.objects.filter(scope_id=scope_id)
            .order_by("ordinal")
            .values_list("kind", "value")
        ],
        "version": scope.version,
        "idempotency_key": scope.idempotency_key,
        "request_digest": scope.request_digest,
        "created_by": scope.created_by,
        "created_at": stamp(scope.created_at),
        "request_id": scope.request_id,
        "last_position": 0 if head is None else head.last_position,
    }


def _records(selection: Selection) -> Iterator[dict[str, Any]]:
    sources = selection.sources().values(*_SOURCE_FIELDS)
    yield from map(_source, _keyset(sources, "position", BATCH))
    attempts = selection.attempts().values("id", *_ATTEMPT_FIELDS)
    yield from map(_attempt, _keyset(attempts, "id"))
    yield from map(_closure, _keyset(selection.closures(), "id"))
    holds = selection.holds().select_related("release")
    yield from map(_hold, _keyset(holds, "id"))
    yield from map(purge_run_record, _keyset(selection.purge_runs(), "id"))
    redactions = selection.redactions().select_related("source")
    yield from map(_redaction, _keyset(redactions, "id"))
    for envelope in _keyset(selection.envelopes(), "id"):
        yield _envelope(envelope)
        values = EnvelopeValue.objects.filter(envelope=envelope)
        for value in _keyset(values, "id", BATCH):
            yield _envelope_value(envelope.session_id, value)
        revisions = EnvelopeRevision.objects.filter(envelope=envelope)
        for revision in _keyset(revisions, "version"):
            yield _envelope_revision(envelope.session_id, revision)
    yield from map(
        _handoff_revision, _keyset(selection.handoff_revisions(), "revision")
    )
    for head in selection.handoff_heads().select_related("current"):
        yield {
            "kind": "handoff_head",
            "revision": None if head.current is None else head.current.revision,
            "updated_at": maybe(head.updated_at),
        }


def _keyset(rows: QuerySet[Any], key: str, size: int = 2000) -> Iterator[Any]:
    """``rows`` in ``key`` order, read ``size`` at a time after the last key seen."""
    last = None
    while True:
        page = rows.order_by(key)
        if last is not None:
            page = page.filter(**{f"{key}__gt": last})
        batch = list(page[:size])
        yield from batch
        if len(batch) < size:
            return
        end = batch[-1]
        last = end[key] if isinstance(end, dict) else getattr(end, key)


_SOURCE_FIELDS = (
    "source_type",
    "source_id",
    "position",
    "content",
    "content_bytes",
    "metadata",
    "metadata_bytes",
    "is_working_note",
    "session_id",
    "note_kind",
    "expires_at",
    "value_digest",
    "content_digest",
    "created_at",
    "created_by",
    "request_id",
    "purged_at",
    "purge_run",
)
_ATTEMPT_FIELDS = (
    "source_type",
    "source_id",
    "outcome",
    "reason",
    "value_digest",
    "principal",
    "request_id",
    "at",
)


def _source(row: dict[str, Any]) -> dict[str, Any]:
    metadata = row["metadata"]
    return {
        "kind": "source",
        **row,
        "metadata": None if metadata is None else json_text(metadata),
        "expires_at": maybe(row["expires_at"]),
        "created_at": stamp(row["created_at"]),
        "purged_at": maybe(row["purged_at"]),
    }


def _attempt(row: dict[str, Any]) -> dict[str, Any]:
    record = {"kind": "attempt", **row, "at": stamp(row["at"])}
    del record["id"]
    return record


def _closure(row: SessionClosure) -> dict[str, Any]:
    return {
        "kind": "closure",
        "session_id": row.session_id,
        "closed_at": stamp(row.closed_at),
        "closed_by": row.closed_by,
        "request_id": row.request_id,
    }


def _hold(row: LegalHold) -> dict[str, Any]:
    try:
        release: LegalHoldRelease | None = row.release
    except LegalHoldRelease.DoesNotExist:
        release = None
    return {
        "kind": "hold",
        "hold_id": row.hold_id,
        "session_id": row.session_id,
        "reason": row.reason,
        "set_by": row.set_by,
        "set_at": stamp(row.set_at),
        "request_id": row.request_id,
        "release": None
        if release is None
        else {
            "reason": release.reason,
            "released_by": release.released_by,
            "released_at": stamp(release.released_at),
            "request_id": release.request_id,
        },
    }


def purge_run_record(row: PurgeRun) -> dict[str, Any]:
    return {
        "kind": "purge_run",
        "run_id": row.run_id,
        "scope_id": row.scope_id,
        "older_than_seconds": row.older_than_seconds,
        "cutoff": stamp(row.cutoff),
        "dry_run": row.dry_run,
        "purged": row.purged,
        "skipped_held": row.skipped_held,
        "skipped_cited": row.skipped_cited,
        "envelopes_cleared": row.envelopes_cleared,
        "started_by": row.started_by,
        "started_at": stamp(row.started_at),
        "finished_at": stamp(row.finished_at),
        "request_id": row.request_id,
    }


def _redaction(row: Redaction) -> dict[str, Any]:
    return {
        "kind": "redaction",
        "redaction_id": row.redaction_id,
        "source_type": row.source.source_type,
        "source_id": row.source.source_id,
        "reason": row.reason,
        "redacted_by": row.redacted_by,
        "redacted_at": stamp(row.redacted_at),
        "request_id": row.request_id,
    }


def _envelope(row: SessionEnvelope) -> dict[str, Any]:
    return {
        "kind": "envelope",
        "session_id": row.session_id,
        "meta": json_text(row.meta),
        "version": row.version,
        "notes_version": row.notes_version,
        "clock": row.clock,
        "created_at": stamp(row.created_at),
        "updated_at": stamp(row.updated_at),
    }


def _envelope_value(session_id: str, row: EnvelopeValue) -> dict[str, Any]:
    return {
        "kind": "envelope_value",
        "session_id": session_id,
        "digest": row.digest,
        "for_notes": row.for_notes,
        "value": json_text(row.value),
    }


def _envelope_revision(session_id: str, row: EnvelopeRevision) -> dict[str, Any]:
    return {
        "kind": "envelope_revision",
        "session_id": session_id,
        "version": row.version,
        "clock": row.clock,
        "writer": row.writer,
        "operation": row.operation,
        "principal": row.principal,
        "request_id": row.request_id,
        "created_at": stamp(row.created_at),
        "value_digests": json_text(row.value_digests),
        "inline_values": json_text(row.inline_values),
    }


def _handoff_revision(row: HandoffRevision) -> dict[str, Any]:
    statements = HandoffStatement.objects.filter(revision=row).order_by(
        "claim", "ordinal"
    )
    citations: dict[int, list[dict[str, Any]]] = {}
    for citation in HandoffCitation.objects.filter(statement__revision=row).order_by(
        "statement_id", "ordinal"
    ):
        citations.setdefault(citation.statement_id, []).append(_citation(citation))
    lineage = (
        HandoffLineage.objects.filter(revision=row)
        .order_by("ordinal")
        .values_list("ordinal", "source__source_type", "source__source_id")
    )
    return {
        "kind": "handoff_revision",
        "revision": row.revision,
        "content": row.content,
        "content_digest": row.content_digest,
        "objective": row.objective,
        "disposition": row.disposition,
        "created_at": stamp(row.created_at),
        "created_by": row.created_by,
        "request_id": row.request_id,
        "statements": [
            {
                "claim": statement.claim,
                "ordinal": statement.ordinal,
                "text": statement.text,
                "citations": citations.get(statement.pk, []),
            }
            for statement in statements
        ],
        "lineage": [
            {"ordinal": ordinal, "source_type": source_type, "source_id": source_id}
            for ordinal, source_type, source_id in lineage
        ],
    }


def _citation(row: HandoffCitation) -> dict[str, Any]:
    return {
        "ordinal": row.ordinal,
        "kind": row.kind,
        "source_type": row.source_type,
        "source_id": row.source_id,
        "artifact_family": row.artifact_family,
        "artifact_id": row.artifact_id,
        "artifact_revision": row.artifact_revision,
    }


def chunked(lines: Iterator[bytes], size: int = 1 << 16) -> Iterator[bytes]:
    """``lines`` joined into chunks of about ``size`` bytes, for a streamed
    answer: one write per chunk instead of one per line. Closing this closes
    ``lines`` (the export's transaction ends with it)."""
    buffer: list[bytes] = []
    held = 0
    try:
        for line in lines:
            buffer.append(line)
            held += len(line)
            if held >= size:
                yield b"".join(buffer)
                buffer, held = [], 0
        if buffer:
            yield b"".join(buffer)
    finally:
        close = getattr(lines, "close", None)
        if close is not None:
            close()
