"""Working-notes writes, and the bridge that captures notes as a Working Note.

Both writes are worker-owned overlays of the single key ``workingNotes``; every
other key is carried forward. A notes PUT may also ask for the same text to be
captured as a Source-backed Working Note (docs/api.md) in the same
transaction: the notes are written, then captured, and either both are kept or
neither is.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.db import transaction

from powercontext.exceptions import InvalidRequest
from powercontext.principals import Principal
from powercontext.text import IDENTITY_MAX_LENGTH
from sources.services import AttemptLog, Receipt, attempt_log, working_note_capture

from ..captures import NotesCapture
from ..meta import sanitize_working_notes
from ..meta_keys import WORKING_NOTES_KEY, Owner
from ..models import WriteOperation
from ..preconditions import IfMatch
from ..selectors import WorkingNotesState
from .writes import EnvelopeWritten, Meta, Writer, envelope_write, set_key


@dataclass(frozen=True)
class WorkingNotesWrite:
    """What a working-notes write did, in the working-notes shape."""

    notes: WorkingNotesState
    created: bool
    changed: bool
    receipt: Receipt | None = None


def working_notes_put(
    *,
    scope_id: str,
    session_id: str,
    notes: str,
    capture: NotesCapture | None,
    if_match: IfMatch | None,
    principal: Principal,
    request_id: str,
) -> WorkingNotesWrite:
    """Set the session's notes; with ``capture``, also capture them as a Working Note.

    The notes are trimmed; empty after trimming clears them; equal to the stored
    notes is a no-op (no version). Creates the envelope when missing. The capture
    uses ``capture.source_id`` or ``default_capture_source_id`` of the version
    that wrote these notes, so replaying the same PUT replays the capture.

    Raises ``ScopeNotFound``; ``PreconditionFailed`` when ``if_match`` does not
    admit the envelope (as for envelope writes); ``WorkingNotesTooLarge`` (details
    ``bytes``/``max_bytes``); ``MetaTooLarge``; ``InvalidRequest`` for a capture
    of empty notes; and the capture's own errors (``SourceConflict``,
    ``CaptureRejected``), after which nothing is stored. One durable transaction
    holding the envelope row lock, then the scope's journal lock for a capture.
    """

    def put_notes(current: Meta) -> Meta:
        clean = sanitize_working_notes(notes)
        if clean is None and capture is not None:
            raise InvalidRequest.for_field(
                "notes",
                "empty",
                "A capture needs notes: these are empty after trimming.",
            )
        result = dict(current)
        set_key(result, WORKING_NOTES_KEY, clean)
        return result

    writer = Writer(Owner.WORKER, WriteOperation.NOTES_PUT, principal, request_id)
    # The log closes after the transaction: the attempts of a capture that rolls
    # the notes back are still written (api.md 5.3).
    with attempt_log() as log, transaction.atomic(durable=True):
        written = envelope_write(
            scope_id=scope_id,
            session_id=session_id,
            if_match=if_match,
            change=put_notes,
            writer=writer,
        )
        receipt = (
            _capture(written, capture, scope_id, session_id, writer, log)
            if capture is not None
            else None
        )
    return _notes_write(written, receipt)


def working_notes_clear(
    *,
    scope_id: str,
    session_id: str,
    if_match: IfMatch | None,
    principal: Principal,
    request_id: str,
) -> WorkingNotesWrite:
    """Clear the session's notes. Without an envelope nothing is created.

    Raises ``ScopeNotFound``; ``PreconditionFailed`` when ``if_match`` does not
    admit the envelope (any ``If-Match`` on a missing envelope). One durable
    transaction holding the envelope row lock.
    """

    def clear_notes(current: Meta) -> Meta:
        return {k: v for k, v in current.items() if k != WORKING_NOTES_KEY}

    with transaction.atomic(durable=True):
        written = envelope_write(
            scope_id=scope_id,
            session_id=session_id,
            if_match=if_match,
            change=clear_notes,
            writer=Writer(
                Owner.WORKER, WriteOperation.NOTES_CLEAR, principal, request_id
            ),
            create=False,
        )
    return _notes_write(written, None)


def default_capture_source_id(session_id: str, version: int) -> str:
    """``session-notes:{session_id}:v{version}``; past 256 characters the session
    id part becomes ``sha256:`` + the first 32 hex of its SHA-256 (UTF-8)."""
    source_id = f"session-notes:{session_id}:v{version}"
    if len(source_id) <= IDENTITY_MAX_LENGTH:
        return source_id
    digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]
    return f"session-notes:sha256:{digest}:v{version}"


def _capture(
    written: EnvelopeWritten,
    capture: NotesCapture,
    scope_id: str,
    session_id: str,
    writer: Writer,
    log: AttemptLog,
) -> Receipt:
    """Capture the notes ``written`` left, inside the caller's transaction."""
    assert written.state is not None, "a notes PUT always leaves an envelope"
    notes = written.state.meta[WORKING_NOTES_KEY]
    assert isinstance(notes, str), "the notes rule stores text"
    assert written.notes_version is not None, "notes have the version that wrote them"
    return working_note_capture(
        principal=writer.principal,
        scope_id=scope_id,
        source_id=capture.source_id
        or default_capture_source_id(session_id, written.notes_version),
        content=notes,
        session_id=session_id,
        note_kind=capture.note_kind,
        expires_at=capture.expires_at,
        request_id=writer.request_id,
        now=written.at,
        log=log,
    )


def _notes_write(
    written: EnvelopeWritten, receipt: Receipt | None
) -> WorkingNotesWrite:
    state = written.state
    notes = state.meta.get(WORKING_NOTES_KEY) if state is not None else None
    return WorkingNotesWrite(
        notes=WorkingNotesState(
            notes=notes if isinstance(notes, str) else None,
            version=state.version if state is not None else None,
            updated_at=state.updated_at if state is not None else None,
        ),
        created=written.created,
        changed=written.changed,
        receipt=receipt,
    )
