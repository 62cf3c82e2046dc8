"""Lifecycle writes. Every service owns its transaction (purge: one per batch)."""

from .closures import session_close
from .holds import hold_release, hold_set
from .purge import PurgeResult, purge_run
from .redaction import source_redact

__all__ = [
    "PurgeResult",
    "hold_release",
    "hold_set",
    "purge_run",
    "session_close",
    "source_redact",
]
