"""Writes to session envelopes: the envelope operations, working notes (with the
capture bridge) and revision retention.

Every public service owns its transaction (``transaction.atomic(durable=True)``)
and writes through ``writes.envelope_write``, the one envelope write path.
"""

from .envelopes import envelope_overlay, envelope_replace
from .retention import PruneResult, envelope_revisions_prune
from .working_notes import (
    DEFAULT_NOTE_KIND,
    NotesCapture,
    WorkingNotesWrite,
    default_capture_source_id,
    working_notes_clear,
    working_notes_put,
)
from .writes import EnvelopeWrite, next_clock

__all__ = [
    "DEFAULT_NOTE_KIND",
    "EnvelopeWrite",
    "NotesCapture",
    "PruneResult",
    "WorkingNotesWrite",
    "default_capture_source_id",
    "envelope_overlay",
    "envelope_replace",
    "envelope_revisions_prune",
    "next_clock",
    "working_notes_clear",
    "working_notes_put",
]
