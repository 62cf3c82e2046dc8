"""Writes to session envelopes: the envelope operations and revision retention.

Every service owns its transaction (``transaction.atomic(durable=True)``).
"""

from .envelopes import (
    EnvelopeWrite,
    WorkingNotesWrite,
    envelope_overlay,
    envelope_replace,
    next_clock,
    working_notes_clear,
    working_notes_put,
)
from .retention import PruneResult, envelope_revisions_prune

__all__ = [
    "EnvelopeWrite",
    "PruneResult",
    "WorkingNotesWrite",
    "envelope_overlay",
    "envelope_replace",
    "envelope_revisions_prune",
    "next_clock",
    "working_notes_clear",
    "working_notes_put",
]
