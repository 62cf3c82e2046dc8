"""Writes of handoffs: finalize (checks, writes nothing), commit (the one writer
of revisions), and the two generation operations this service cannot perform.
Every service that writes owns its transaction."""

from .commit import CommittedRevision, handoff_commit, handoff_head_lock
from .drafts import handoff_activate, handoff_finalize, handoff_prepare

__all__ = [
    "CommittedRevision",
    "handoff_activate",
    "handoff_commit",
    "handoff_finalize",
    "handoff_head_lock",
    "handoff_prepare",
]
