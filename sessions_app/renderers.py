"""Wire shapes of envelopes and working notes, from domain objects (no queries)."""

from __future__ import annotations

from typing import Any

from powercontext.text import format_datetime
from sources.renderers import receipt_body

from .search import NotesHit
from .selectors import EnvelopeState, WorkingNotesState
from .services import WorkingNotesWrite


def envelope_body(state: EnvelopeState) -> dict[str, Any]:
    return {
        "scope_id": state.scope_id,
        "session_id": state.session_id,
        "meta": state.meta,
        "version": state.version,
        "clock": state.clock,
        "created_at": format_datetime(state.created_at),
        "updated_at": format_datetime(state.updated_at),
    }


def working_notes_body(state: WorkingNotesState) -> dict[str, Any]:
    return {
        "notes": state.notes,
        "bytes": state.bytes,
        "max_bytes": state.max_bytes,
        "version": state.version,
        "updated_at": (
            format_datetime(state.updated_at) if state.updated_at is not None else None
        ),
    }


def working_notes_write_body(written: WorkingNotesWrite) -> dict[str, Any]:
    receipt = written.receipt
    return {
        **working_notes_body(written.notes),
        "source": receipt_body(receipt) if receipt is not None else None,
    }


def notes_search_item(hit: NotesHit) -> dict[str, Any]:
    """One envelope search result (``schemas.EnvelopeSearchItem``)."""
    return {
        "session_id": hit.session_id,
        "version": hit.version,
        "snippet": hit.snippet,
    }
