"""The one write path of envelopes, shared by every envelope write service.

``envelope_write`` serializes writes on the envelope row (``SELECT ... FOR
UPDATE``; SQLite's IMMEDIATE transactions give the same one-writer-at-a-time
order). It reads the current meta under that lock, computes the next meta from
it and writes the row and its revision, so there is no read-modify-write race
and versions have no gaps or repeats. A missing envelope is created insert-first
inside a savepoint; when a concurrent write created it first, the unique
constraint says so and the write is applied to that row instead.

The caller - a public service - owns the transaction: ``envelope_write`` must
run inside ``transaction.atomic(durable=True)``, so the service can do more in
the same transaction (the working-notes capture bridge).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from powercontext.canonical import canonical_json, canonical_sha256
from powercontext.db.constraints import violates_constraint
from powercontext.exceptions import PreconditionFailed
from powercontext.principals import Principal
from sources.exceptions import SessionClosed
from sources.selectors import scope_require

from ..meta import Scalar, check_meta_size, same_meta, same_value, sanitize_stored
from ..meta_keys import WORKING_NOTES_KEY, Owner
from ..models import EnvelopeRevision, EnvelopeValue, SessionEnvelope, WriteOperation
from ..preconditions import IfMatch
from ..selectors import EnvelopeState, envelope_state
from .locks import locked_envelope, session_is_closed

Meta = dict[str, Scalar]
MetaChange = Callable[[Meta], Meta]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_IDENTITY_CONSTRAINT = "sessions_envelope_identity_uniq"
# Revisions copy values whose canonical JSON is at most this long (a digest's length).
INLINE_VALUE_MAX_BYTES = 64


@dataclass(frozen=True)
class Writer:
    """Who writes: the side (host/worker), the operation, the caller, the request."""

    side: Owner
    operation: WriteOperation
    principal: Principal
    request_id: str


@dataclass(frozen=True)
class EnvelopeWritten:
    """What a write did. ``state`` is None only when no envelope exists or was made.

    ``notes_version`` is the version whose write left the current working notes
    (None without notes); ``at`` is the instant the write was decided.
    """

    state: EnvelopeState | None
    created: bool
    changed: bool
    notes_version: int | None
    at: datetime


def envelope_write(
    *,
    scope_id: str,
    session_id: str,
    if_match: IfMatch | None,
    change: MetaChange,
    writer: Writer,
    create: bool = True,
    closed_too: bool = False,
) -> EnvelopeWritten:
    """Apply ``change`` to the envelope's readable meta under the envelope row lock.

    Order: scope exists (``ScopeNotFound``) -> session open (``SessionClosed``,
    read after the envelope lock, which closing the session also takes) ->
    ``If-Match`` (``PreconditionFailed``) -> ``change`` (its rule errors) ->
    whole-meta cap (``MetaTooLarge``) -> write; only erasure writes a closed
    session (``closed_too``). A change that leaves the readable meta as it was
    writes nothing. Without an envelope and with ``create=False`` nothing is
    written either. This is the only path to an envelope write.
    """
    assert connection.in_atomic_block, "the calling service owns the transaction"
    envelope = locked_envelope(scope_id, session_id)
    # Taken after the lock, so updated_at follows the order writes happen in.
    now = timezone.now()
    if envelope is None:
        scope_require(scope_id=scope_id)
    if not closed_too and session_is_closed(envelope, scope_id, session_id):
        raise SessionClosed()
    if envelope is None:
        _require_precondition(if_match, None)
        if not create:
            return EnvelopeWritten(
                None, created=False, changed=False, notes_version=None, at=now
            )
        written = _create_envelope(scope_id, session_id, change, writer, now)
        if written is not None:
            return written
        # A concurrent write created the envelope first: apply this one after it.
        envelope = locked_envelope(scope_id, session_id)
        assert envelope is not None, "the unique constraint said it exists"
        now = timezone.now()
    return _update_envelope(envelope, if_match, change, writer, now)


def next_clock(previous: int, now: datetime) -> int:
    """``max(previous + 1, now in ms)``: strictly increasing even if time steps back."""
    return max(previous + 1, (now - _EPOCH) // timedelta(milliseconds=1))


def _create_envelope(
    scope_id: str, session_id: str, change: MetaChange, writer: Writer, now: datetime
) -> EnvelopeWritten | None:
    """Insert version 1 in a savepoint; None when a concurrent write inserted it."""
    meta = change({})
    check_meta_size(meta)
    notes_version = 1 if WORKING_NOTES_KEY in meta else None
    try:
        with transaction.atomic():
            envelope = SessionEnvelope.objects.create(
                scope_id=scope_id,
                session_id=session_id,
                meta=meta,
                version=1,
                notes_version=notes_version,
                clock=next_clock(0, now),
                created_at=now,
                updated_at=now,
            )
    except IntegrityError as exc:
        if not violates_constraint(exc, SessionEnvelope, _IDENTITY_CONSTRAINT):
            raise
        return None
    _append_revision(envelope, meta, writer, now, previous_digests={})
    return EnvelopeWritten(
        envelope_state(envelope, meta),
        created=True,
        changed=True,
        notes_version=notes_version,
        at=now,
    )


def _update_envelope(
    envelope: SessionEnvelope,
    if_match: IfMatch | None,
    change: MetaChange,
    writer: Writer,
    now: datetime,
) -> EnvelopeWritten:
    """The next version of a locked envelope, or nothing when nothing changes."""
    _require_precondition(if_match, envelope.version)
    current = sanitize_stored(
        envelope.meta, scope_id=envelope.scope_id, session_id=envelope.session_id
    )
    meta = change(current)
    if same_meta(meta, current):
        return EnvelopeWritten(
            envelope_state(envelope, current),
            created=False,
            changed=False,
            notes_version=_notes_version(envelope, current),
            at=now,
        )
    check_meta_size(meta)
    previous_digests = _revision_digests(envelope)
    notes = meta.get(WORKING_NOTES_KEY)
    envelope.version += 1
    if notes is None:
        envelope.notes_version = None
    elif not same_value(notes, current.get(WORKING_NOTES_KEY)):
        envelope.notes_version = envelope.version
    envelope.meta = meta
    envelope.clock = next_clock(envelope.clock, now)
    envelope.updated_at = now
    envelope.save(
        update_fields=["meta", "version", "notes_version", "clock", "updated_at"]
    )
    _append_revision(envelope, meta, writer, now, previous_digests)
    return EnvelopeWritten(
        envelope_state(envelope, meta),
        created=False,
        changed=True,
        notes_version=_notes_version(envelope, meta),
        at=now,
    )


def _notes_version(envelope: SessionEnvelope, meta: Meta) -> int | None:
    """The version that wrote ``meta``'s notes; the current one when the row does
    not know (notes stored by a direct database edit)."""
    if WORKING_NOTES_KEY not in meta:
        return None
    return envelope.notes_version or envelope.version


def _require_precondition(if_match: IfMatch | None, version: int | None) -> None:
    if if_match is not None and not if_match.admits(version):
        raise PreconditionFailed(
            "If-Match does not match the envelope's current ETag."
            if version is not None
            else "If-Match was sent but the envelope does not exist."
        )


def set_key(meta: Meta, key: str, value: Scalar | None) -> None:
    """Set ``key`` to ``value``; ``None`` (a cleared value) removes it."""
    if value is None:
        meta.pop(key, None)
    else:
        meta[key] = value


# --- Revisions ---------------------------------------------------------------------


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
    """Record ``envelope`` as written. Values stored by reference are inserted only
    when the previous revision did not already reference them (an unchanged
    512 KiB value is not copied again)."""
    inline = {
        key: value for key, value in meta.items() if not _by_reference(key, value)
    }
    digests = {
        key: canonical_sha256(value) for key, value in meta.items() if key not in inline
    }
    known = {_value_address(key, digest) for key, digest in previous_digests.items()}
    new_values = {
        _value_address(key, digest): meta[key]
        for key, digest in digests.items()
        if _value_address(key, digest) not in known
    }
    if new_values:
        EnvelopeValue.objects.bulk_create(
            [
                EnvelopeValue(
                    envelope=envelope, for_notes=for_notes, digest=digest, value=value
                )
                for (for_notes, digest), value in new_values.items()
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
        inline_values=inline,
    )


def _value_address(key: str, digest: str) -> tuple[bool, str]:
    """Where a revision's ``key: digest`` is stored: ``(for_notes, digest)``."""
    return key == WORKING_NOTES_KEY, digest


def _by_reference(key: str, value: Scalar) -> bool:
    """Whether a revision refers to ``value`` by digest instead of copying it.

    A digest is 64 characters, so shorter values are cheaper to copy. The notes
    always go by reference: their text may be captured as a Source, and redacting
    it must then reach every revision through one ``EnvelopeValue`` row - a row of
    the notes' own, so that erasing it never takes another key's value with it.
    """
    return (
        key == WORKING_NOTES_KEY or len(canonical_json(value)) > INLINE_VALUE_MAX_BYTES
    )
