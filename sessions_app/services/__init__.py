"""Writes to session envelopes: the envelope operations, working notes (with the
capture bridge) and revision retention.

Every public service owns its transaction (``transaction.atomic(durable=True)``)
and writes through ``writes.envelope_write``, the one envelope write path.
"""

from .envelopes import envelope_overlay, envelope_replace
from .erasure import envelope_notes_erase, envelopes_holding, notes_kept_condition
from .retention import PruneResult, envelope_revisions_prune
from .working_notes import (
    WorkingNotesWrite,
    working_notes_clear,
    working_notes_put,
)
from .writes import EnvelopeWritten

__all__ = [
    "EnvelopeWritten",
    "PruneResult",
    "WorkingNotesWrite",
    "envelope_notes_erase",
    "envelope_overlay",
    "envelope_replace",
    "envelope_revisions_prune",
    "envelopes_holding",
    "notes_kept_condition",
    "working_notes_clear",
    "working_notes_put",
]
