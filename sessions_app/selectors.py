"""Reads of envelopes and working notes, always by ``(scope_id, session_id)``.

A read is one query on the ``(scope, session_id)`` unique index (``get()``, so no
ORDER BY steers the planner to another index). Only when that
finds nothing does a second query tell a missing scope (404 ``scope_not_found``)
from a missing envelope. Every value read passes through the meta sanitizer, so
stored poison is returned as unset and logged, never an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings

from powercontext.db.json import JSONMember
from sources.selectors import scope_require

from .exceptions import SessionNotFound
from .fold import working_notes_fold_text
from .meta import Scalar, sanitize_stored, sanitize_stored_value, utf8_length
from .meta_keys import WORKING_NOTES_KEY
from .models import EnvelopeRevision, EnvelopeValue, SessionEnvelope


@dataclass(frozen=True)
class EnvelopeState:
    """An envelope as the API shows it: ``meta`` holds only readable values."""

    scope_id: str
    session_id: str
    meta: dict[str, Scalar]
    version: int
    clock: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class WorkingNotesState:
    """The notes of a session; every field but ``max_bytes`` is None/0 without an
    envelope, and ``notes`` is None when there are none."""

    notes: str | None
    version: int | None
    updated_at: datetime | None

    @property
    def bytes(self) -> int:
        return utf8_length(self.notes) if self.notes is not None else 0

    @property
    def max_bytes(self) -> int:
        max_bytes: int = settings.WORKING_NOTES_MAX_BYTES
        return max_bytes


def envelope_state(envelope: SessionEnvelope, meta: dict[str, Scalar]) -> EnvelopeState:
    return EnvelopeState(
        scope_id=envelope.scope_id,
        session_id=envelope.session_id,
        meta=meta,
        version=envelope.version,
        clock=envelope.clock,
        created_at=envelope.created_at,
        updated_at=envelope.updated_at,
    )


def envelope_get(*, scope_id: str, session_id: str) -> EnvelopeState:
    """The envelope with its readable meta.

    Raises ``ScopeNotFound`` when the scope does not exist and ``SessionNotFound``
    when it holds no envelope for ``session_id``. One query when it exists.
    """
    try:
        envelope = SessionEnvelope.objects.get(scope_id=scope_id, session_id=session_id)
    except SessionEnvelope.DoesNotExist:
        scope_require(scope_id=scope_id)
        raise SessionNotFound() from None
    meta = sanitize_stored(envelope.meta, scope_id=scope_id, session_id=session_id)
    return envelope_state(envelope, meta)


def working_notes_get(*, scope_id: str, session_id: str) -> WorkingNotesState:
    """The session's notes, fetching only that key of the meta (one query).

    Without an envelope the notes are None (not an error); raises
    ``ScopeNotFound`` when the scope does not exist.
    """
    try:
        version, updated_at, stored = SessionEnvelope.objects.values_list(
            "version", "updated_at", JSONMember("meta", WORKING_NOTES_KEY)
        ).get(scope_id=scope_id, session_id=session_id)
    except SessionEnvelope.DoesNotExist:
        scope_require(scope_id=scope_id)
        return WorkingNotesState(notes=None, version=None, updated_at=None)
    notes = sanitize_stored_value(
        WORKING_NOTES_KEY, stored, scope_id=scope_id, session_id=session_id
    )
    assert notes is None or isinstance(notes, str), "the notes rule returns text"
    return WorkingNotesState(notes=notes, version=version, updated_at=updated_at)


def working_notes_fold(*, scope_id: str, session_id: str) -> str | None:
    """The notes block for a system prompt, or None when there are no notes.

    One query; the same stored notes give the same bytes. Raises
    ``ScopeNotFound`` when the scope does not exist.
    """
    notes = working_notes_get(scope_id=scope_id, session_id=session_id).notes
    return working_notes_fold_text(notes) if notes is not None else None


ERASED = "(erased by purge or redaction)"


def revision_meta(revision: EnvelopeRevision) -> dict[str, Any]:
    """The meta a revision recorded: its inline values plus the values it refers
    to, read from its envelope's stored values (one query). A value that purge or
    redaction erased reads as ``ERASED``."""
    digests: dict[str, str] = revision.value_digests
    values = {
        (for_notes, digest): value
        for for_notes, digest, value in EnvelopeValue.objects.filter(
            envelope_id=revision.envelope_id, digest__in=set(digests.values())
        ).values_list("for_notes", "digest", "value")
    }
    meta = {
        key: values.get((key == WORKING_NOTES_KEY, digest), ERASED)
        for key, digest in digests.items()
    }
    return dict(sorted({**revision.inline_values, **meta}.items()))
