"""Capture: the one path by which Sources enter the registry.

Both capture operations (generic content and working notes) and server-assigned
creation run through ``_capture``:

1. in one short durable write (``journal.journal_capture``), an existing
   identity is found - a replay or a conflict, without touching the journal
   head - or the Source is appended at the scope's next position together
   with its ``accepted`` attempt;
2. if a concurrent capture of the same identity won the race, the identity
   constraint fails, the transaction rolls back (the position with it) and the
   winner is classified exactly as in step 1.

Replays, conflicts and rejections go to the request's ``AttemptLog``, written
after the service's transaction in short transactions of their own
(``attempts.attempt_log``); a logging failure never changes the answer. The
envelope's notes bridge captures inside its own transaction and passes its log,
so the attempts of a capture it rolls back are still written.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, NoReturn

from django.db import IntegrityError
from django.utils import timezone

from powercontext import metrics
from powercontext.db.constraints import violates_constraint
from powercontext.principals import Principal
from sources import selectors
from sources.digests import (
    SourceValue,
)
from sources.exceptions import CaptureRejected, SessionClosed, SourceConflict
from sources.identifiers import new_source_id
from sources.journal import journal_capture
from sources.models import CaptureOutcome, ContentSource
from sources.rows import CONTENT, SourceRow

from . import values
from .attempts import AttemptLog, attempt_log

IDENTITY_CONSTRAINT = "sources_source_identity_uniq"


@dataclass(frozen=True)
class Receipt:
    """What a capture answers: the identity, its position, and whether it replayed."""

    source_type: str
    source_id: str
    position: int
    replayed: bool


@dataclass(frozen=True)
class CreatedSource:
    """A Source created with a server-assigned id, as the caller sees it."""

    scope_id: str
    source_type: str
    source_id: str
    content: str  # canonical JSON text
    position: int
    content_digest: str


@dataclass(frozen=True)
class _Attempt:
    """The row being captured and the log its outcome is recorded in."""

    row: SourceRow
    log: AttemptLog

    def record(self, outcome: CaptureOutcome, reason: str | None) -> None:
        metrics.capture_counted(outcome.value)
        self.log.add(
            replace(self.row.accepted_attempt(), outcome=outcome.value, reason=reason)
        )


def source_capture(
    *,
    principal: Principal,
    scope_id: str,
    source_id: str,
    content: str,
    metadata: dict[str, Any] | None,
    request_id: str,
) -> Receipt:
    """Capture generic content (``POST /v1/sources/content``).

    Raises ``ScopeNotFound``; ``CaptureRejected`` for a reserved handoff-receipt
    schema in ``content`` or ``metadata.kind == "working_note"`` (checked before
    the identity); ``SourceConflict`` when the identity holds another value.
    """
    value = SourceValue(content=content, metadata=metadata or {})
    row = SourceRow.of(
        scope_id=scope_id,
        source_id=source_id,
        value=value,
        principal=principal.name,
        request_id=request_id,
        now=timezone.now(),
    )
    with attempt_log() as log:
        return _capture(
            row, log, rule=values.generic_capture_rule(content, value.metadata)
        )


def working_note_capture(
    *,
    principal: Principal,
    scope_id: str,
    source_id: str,
    content: str,
    session_id: str,
    note_kind: str,
    expires_at: datetime | None,
    request_id: str,
    now: datetime | None = None,
    log: AttemptLog | None = None,
) -> Receipt:
    """Capture a Working Note (``POST /v1/sources/working-notes``).

    The server-owned ``is_working_note`` flag is set here and only here. An
    ``expires_at`` not after ``now`` is refused (``not_in_future``) for a new
    identity only: an exact replay of an existing note returns its original
    receipt even after expiry, a different value is a ``SourceConflict``.

    A new identity whose session is closed is refused (``SessionClosed``, 409);
    an existing one replays or conflicts as always (docs/api.md).

    A caller that runs the capture inside its own transaction (the envelope's
    notes bridge) passes its ``log``, written after that transaction; without
    one the capture writes its own attempts before it returns.
    """
    now = now or timezone.now()
    value = values.working_note_value(
        content=content,
        session_id=session_id,
        note_kind=note_kind,
        expires_at=expires_at,
    )
    row = SourceRow.of(
        scope_id=scope_id,
        source_id=source_id,
        value=value,
        principal=principal.name,
        request_id=request_id,
        now=now,
    )
    not_in_future = None
    if expires_at is not None and expires_at <= now:
        not_in_future = CaptureRejected(reason="not_in_future", field="expires_at")
    with attempt_log() if log is None else nullcontext(log) as attempts:
        return _capture(row, attempts, new_identity_rejection=not_in_future)


def source_create(
    *, principal: Principal, scope_id: str, content: Any, request_id: str
) -> CreatedSource:
    """Create a Source with a server-assigned ``src_`` id (``POST .../sources``).

    Not idempotent: every call creates a new Source. Raises ``ScopeNotFound``;
    ``CaptureRejected`` for a reserved handoff-receipt schema.
    """
    row = SourceRow.of(
        scope_id=scope_id,
        source_id=new_source_id(),
        value=SourceValue(content=content, metadata={}),
        principal=principal.name,
        request_id=request_id,
        now=timezone.now(),
    )
    rule = (
        values.reserved_schema_rejection()
        if values.is_reserved_receipt(content)
        else None
    )
    with attempt_log() as log:
        receipt = _capture(row, log, rule=rule)
    return CreatedSource(
        scope_id=row.scope_id,
        source_type=row.source_type,
        source_id=row.source_id,
        content=row.content,
        position=receipt.position,
        content_digest=row.content_digest,
    )


def _capture(
    row: SourceRow,
    log: AttemptLog,
    *,
    rule: CaptureRejected | None = None,
    new_identity_rejection: CaptureRejected | None = None,
) -> Receipt:
    """The shared capture path (see the module docstring).

    ``rule`` refuses whatever the identity holds; ``new_identity_rejection``
    refuses only if the identity is new (an existing one replays or conflicts).
    """
    attempt = _Attempt(row, log)
    if rule is not None:
        _reject(attempt, rule)
    if new_identity_rejection is not None:
        existing = selectors.source_identity_find(
            scope_id=row.scope_id, source_type=CONTENT, source_id=row.source_id
        )
        if existing is None:
            _reject(attempt, new_identity_rejection)
        return _classify(attempt, existing.position, existing.value_digest)
    try:
        outcome = journal_capture(row)
    except IntegrityError as exc:
        if not violates_constraint(exc, ContentSource, IDENTITY_CONSTRAINT):
            raise
        winner = selectors.source_identity_find(
            scope_id=row.scope_id, source_type=CONTENT, source_id=row.source_id
        )
        if winner is None:  # cannot happen: the constraint saw a committed row
            raise
        return _classify(attempt, winner.position, winner.value_digest)
    if outcome.existing_digest is not None:
        return _classify(attempt, outcome.position, outcome.existing_digest)
    if outcome.closed:
        attempt.record(CaptureOutcome.REJECTED, SessionClosed.code)
        raise SessionClosed()
    metrics.capture_counted(CaptureOutcome.ACCEPTED.value)
    return Receipt(CONTENT, row.source_id, outcome.position, replayed=False)


def _classify(attempt: _Attempt, position: int, stored_digest: str) -> Receipt:
    """Replay (equal value digest) or conflict (different), logged either way."""
    if stored_digest == attempt.row.value_digest:
        attempt.record(CaptureOutcome.REPLAYED, None)
        return Receipt(CONTENT, attempt.row.source_id, position, replayed=True)
    attempt.record(CaptureOutcome.CONFLICT, "source_conflict")
    raise SourceConflict()


def _reject(attempt: _Attempt, rejection: CaptureRejected) -> NoReturn:
    """Refuse by a domain rule - after making sure the scope exists (404 first)."""
    selectors.scope_require(scope_id=attempt.row.scope_id)
    attempt.record(CaptureOutcome.REJECTED, rejection.reason)
    raise rejection
