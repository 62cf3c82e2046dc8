"""Lifecycle writes. Every service owns its transaction (purge: one per batch)."""

from .closures import session_close
from .holds import hold_release, hold_set
from .matching import RedactionRun, redact_matching
from .purge import PurgeResult, purge_run
from .redaction import source_redact

__all__ = [
    "PurgeResult",
    "RedactionRun",
    "hold_release",
    "hold_set",
    "purge_run",
    "redact_matching",
    "session_close",
    "source_redact",
]
