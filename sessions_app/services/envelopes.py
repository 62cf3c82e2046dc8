"""Writes to session envelopes. Every service owns one short durable transaction.

All four writes - the host's replace, the worker's overlay, and the two
working-notes writes - go through ``_envelope_write``, which serializes them on
the envelope row (``SELECT ... FOR UPDATE``; SQLite's IMMEDIATE transactions give
the same one-writer-at-a-time order). Each write reads the current meta under
that lock, computes the next meta from it and writes the row and its revision in
the same transaction, so there is no read-modify-write race and versions have no
gaps or repeats. A missing envelope is created insert-first inside a savepoint;
when a concurrent write created it first, the unique constraint says so and the
write is applied to that row instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from powercontext.api.db import violates_constraint
from powercontext.api.exceptions import PreconditionFailed
from powercontext.api.principals import Principal
from powercontext.canonical import canonical_sha256

from ..exceptions import NotHostKey, NotWorkerKey, UnknownMetaKey
from ..meta import (
    WORKING_NOTES_KEY,
    Owner,
    Scalar,
    check_meta_size,
    owner_of,
    same_meta,
    same_value,
    sanitize_stored,
    sanitize_value,
    sanitize_working_notes,
)
from ..models import EnvelopeRevision, EnvelopeValue, SessionEnvelope, WriteOperation
from ..preconditions import IfMatch
from ..selectors import (
    EnvelopeState,
    WorkingNotesState,
    envelope_state,
    require_scope,
)

Meta = dict[str, Scalar]
MetaChange = Callable[[Meta], Meta]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_IDENTITY_CONSTRAINT = "sessions_envelope_identity_uniq"


@dataclass(frozen=True)
class EnvelopeWrite:
    """What a write did: ``state`` is None only when nothing exists or was made."""

    state: EnvelopeState | None
    created: bool
    changed: bool


@dataclass(frozen=True)
class WorkingNotesWrite:
    """What a working-notes write did, in the working-notes shape."""

    notes: WorkingNotesState
    created: bool
    changed: bool

    @classmethod
    def of(cls, written: EnvelopeWrite) -> WorkingNotesWrite:
        state = written.state
        if state is None:
            notes = WorkingNotesState(notes=None, version=None, updated_at=None)
        else:
            stored = state.meta.get(WORKING_NOTES_KEY)
            notes = WorkingNotesState(
                notes=stored if isinstance(stored, str) else None,
                version=state.version,
                updated_at=state.updated_at,
            )
        return cls(notes=notes, created=written.created, changed=written.changed)


@dataclass(frozen=True)
class Writer:
    """Who writes: the side (host/worker), the operation, the caller, the request."""

    side: Owner
    operation: WriteOperation
    principal: Principal
    request_id: str


# --- The operations -------------------------------------------------------------------


def envelope_replace(
    *,
    scope_id: str,
    session_id: str,
    meta: Mapping[str, Any],
    if_match: IfMatch | None,
    principal: Principal,
    request_id: str,
) -> EnvelopeWrite:
    """The host's replace: ``meta`` is the complete set of host-owned and ``x-`` keys.

    Host keys absent from ``meta`` are cleared; worker-owned keys are carried
    forward, and ``meta`` may name one only with exactly its current value.
    Creates the envelope when missing. Raises ``ScopeNotFound``,
    ``PreconditionFailed``, ``UnknownMetaKey``, ``NotHostKey``,
    ``InvalidMetaValue``, ``MetaTooLarge``. Locks the envelope row.
    """

    def replace(current: Meta) -> Meta:
        result = {k: v for k, v in current.items() if owner_of(k) is Owner.WORKER}
        for key, value in meta.items():
            owner = _known_owner(key)
            if owner is Owner.WORKER:
                if key not in current or not same_value(value, current[key]):
                    raise NotHostKey(
                        key,
                        "worker_owned",
                        f"meta.{key} is worker-owned: a PUT may repeat it only with "
                        "exactly its current value, and must omit it when unset.",
                    )
                continue
            _set(result, key, sanitize_value(key, value))
        return result

    return _envelope_write(
        scope_id=scope_id,
        session_id=session_id,
        if_match=if_match,
        change=replace,
        writer=Writer(Owner.HOST, WriteOperation.REPLACE, principal, request_id),
    )


def envelope_overlay(
    *,
    scope_id: str,
    session_id: str,
    patch: Mapping[str, Any],
    if_match: IfMatch | None,
    principal: Principal,
    request_id: str,
) -> EnvelopeWrite:
    """The worker's overlay: set the worker-owned keys ``patch`` names.

    ``null`` or ``""`` clears a key; every key not named is carried forward.
    Creates the envelope when missing. Raises ``ScopeNotFound``,
    ``PreconditionFailed``, ``UnknownMetaKey``, ``NotWorkerKey``,
    ``InvalidMetaValue``, ``WorkingNotesTooLarge``, ``MetaTooLarge``. Locks the
    envelope row.
    """

    def overlay(current: Meta) -> Meta:
        result = dict(current)
        for key, value in patch.items():
            if _known_owner(key) is Owner.HOST:
                raise NotWorkerKey(
                    key,
                    "host_owned",
                    f"meta.{key} is host-owned: a PATCH names worker-owned keys only.",
                )
            _set(result, key, sanitize_value(key, value))
        return result

    return _envelope_write(
        scope_id=scope_id,
        session_id=session_id,
        if_match=if_match,
        change=overlay,
        writer=Writer(Owner.WORKER, WriteOperation.OVERLAY, principal, request_id),
    )


def working_notes_put(
    *, scope_id: str, session_id: str, notes: str, principal: Principal, request_id: str
) -> WorkingNotesWrite:
    """Set the session's notes (a worker-owned write; other keys are untouched).

    The notes are trimmed; empty after trimming clears them; equal to the stored
    notes is a no-op (no version). Creates the envelope when missing. Raises
    ``ScopeNotFound``, ``WorkingNotesTooLarge`` (details ``bytes``/``max_bytes``,
    nothing stored), ``MetaTooLarge``. Locks the envelope row.
    """

    def put_notes(current: Meta) -> Meta:
        result = dict(current)
        _set(result, WORKING_NOTES_KEY, sanitize_working_notes(notes))
        return result

    written = _envelope_write(
        scope_id=scope_id,
        session_id=session_id,
        if_match=None,
        change=put_notes,
        writer=Writer(Owner.WORKER, WriteOperation.NOTES_PUT, principal, request_id),
    )
    return WorkingNotesWrite.of(written)


def working_notes_clear(
    *, scope_id: str, session_id: str, principal: Principal, request_id: str
) -> WorkingNotesWrite:
    """Clear the session's notes. Without an envelope nothing is created.

    Raises ``ScopeNotFound``. Locks the envelope row.
    """

    def clear_notes(current: Meta) -> Meta:
        return {k: v for k, v in current.items() if k != WORKING_NOTES_KEY}

    written = _envelope_write(
        scope_id=scope_id,
        session_id=session_id,
        if_match=None,
        change=clear_notes,
        writer=Writer(Owner.WORKER, WriteOperation.NOTES_CLEAR, principal, request_id),
        create=False,
    )
    return WorkingNotesWrite.of(written)


# --- The one write path ---------------------------------------------------------------


def _envelope_write(
    *,
    scope_id: str,
    session_id: str,
    if_match: IfMatch | None,
    change: MetaChange,
    writer: Writer,
    create: bool = True,
) -> EnvelopeWrite:
    """Apply ``change`` to the envelope's readable meta under the envelope row lock.

    Order: scope exists (404) -> ``If-Match`` (412) -> ``change`` (its 422s) ->
    whole-meta cap (422) -> write. This is the only path to an envelope write, so
    any further check on the session's state before a write belongs here, next to
    the precondition.
    """
    with transaction.atomic(durable=True):
        envelope = _locked_envelope(scope_id, session_id)
        # Taken after the lock, so updated_at follows the order writes happen in.
        now = timezone.now()
        if envelope is None:
            require_scope(scope_id=scope_id)
            _require_precondition(if_match, None)
            if not create:
                return EnvelopeWrite(state=None, created=False, changed=False)
            written = _create_envelope(scope_id, session_id, change, writer, now)
            if written is not None:
                return written
            # A concurrent write created the envelope first: apply this one after it.
            envelope = _locked_envelope(scope_id, session_id)
            assert envelope is not None, "the unique constraint said it exists"
            now = timezone.now()
        return _update_envelope(envelope, if_match, change, writer, now)


def _create_envelope(
    scope_id: str, session_id: str, change: MetaChange, writer: Writer, now: datetime
) -> EnvelopeWrite | None:
    """Insert version 1 in a savepoint; None when a concurrent write inserted it."""
    meta = change({})
    check_meta_size(meta)
    try:
        with transaction.atomic():
            envelope = SessionEnvelope.objects.create(
                scope_id=scope_id,
                session_id=session_id,
                meta=meta,
                version=1,
                clock=next_clock(0, now),
                created_at=now,
                updated_at=now,
            )
    except IntegrityError as exc:
        if not violates_constraint(exc, SessionEnvelope, _IDENTITY_CONSTRAINT):
            raise
        return None
    _append_revision(envelope, meta, writer, now, previous_digests={})
    return EnvelopeWrite(
        state=envelope_state(envelope, meta), created=True, changed=True
    )


def _update_envelope(
    envelope: SessionEnvelope,
    if_match: IfMatch | None,
    change: MetaChange,
    writer: Writer,
    now: datetime,
) -> EnvelopeWrite:
    """The next version of a locked envelope, or nothing when nothing changes."""
    _require_precondition(if_match, envelope.version)
    current = sanitize_stored(
        envelope.meta, scope_id=envelope.scope_id, session_id=envelope.session_id
    )
    meta = change(current)
    if same_meta(meta, current):
        return EnvelopeWrite(
            state=envelope_state(envelope, current), created=False, changed=False
        )
    check_meta_size(meta)
    previous_digests = _revision_digests(envelope)
    envelope.meta = meta
    envelope.version += 1
    envelope.clock = next_clock(envelope.clock, now)
    envelope.updated_at = now
    envelope.save(update_fields=["meta", "version", "clock", "updated_at"])
    _append_revision(envelope, meta, writer, now, previous_digests)
    return EnvelopeWrite(
        state=envelope_state(envelope, meta), created=False, changed=True
    )


def next_clock(previous: int, now: datetime) -> int:
    """``max(previous + 1, now in ms)``: strictly increasing even if time steps back."""
    return max(previous + 1, (now - _EPOCH) // timedelta(milliseconds=1))


def _locked_envelope(scope_id: str, session_id: str) -> SessionEnvelope | None:
    return (
        SessionEnvelope.objects.select_for_update()
        .filter(scope_id=scope_id, session_id=session_id)
        .first()
    )


def _require_precondition(if_match: IfMatch | None, version: int | None) -> None:
    if if_match is not None and not if_match.admits(version):
        raise PreconditionFailed(
            "If-Match does not match the envelope's current ETag."
            if version is not None
            else "If-Match was sent but the envelope does not exist."
        )


def _known_owner(key: str) -> Owner:
    owner = owner_of(key)
    if owner is None:
        raise UnknownMetaKey(
            key,
            "unknown_meta_key",
            f"meta.{key} is not a reserved key and does not start with 'x-'.",
        )
    return owner


def _set(meta: Meta, key: str, value: Scalar | None) -> None:
    if value is None:
        meta.pop(key, None)
    else:
        meta[key] = value


# --- Revisions ------------------------------------------------------------------------


def _revision_digests(envelope: SessionEnvelope) -> dict[str, str]:
    """The digests the envelope's latest revision references (its values exist)."""
    digests: dict[str, str] | None = (
        EnvelopeRevision.objects.filter(envelope=envelope, version=envelope.version)
        .values_list("value_digests", flat=True)
        .first()
    )
    return digests or {}


def _append_revision(
    envelope: SessionEnvelope,
    meta: Meta,
    writer: Writer,
    now: datetime,
    previous_digests: Mapping[str, str],
) -> None:
    """Record ``envelope`` as written, storing only values the previous revision
    did not already reference (an unchanged 512 KiB value is not copied again)."""
    digests = {key: canonical_sha256(value) for key, value in meta.items()}
    known = set(previous_digests.values())
    new_values = {
        digest: meta[key] for key, digest in digests.items() if digest not in known
    }
    if new_values:
        EnvelopeValue.objects.bulk_create(
            [
                EnvelopeValue(envelope=envelope, digest=digest, value=value)
                for digest, value in new_values.items()
            ],
            ignore_conflicts=True,
        )
    EnvelopeRevision.objects.create(
        envelope=envelope,
        version=envelope.version,
        clock=envelope.clock,
        writer=writer.side,
        operation=writer.operation,
        principal=writer.principal.name,
        request_id=writer.request_id,
        created_at=now,
        value_digests=digests,
    )
