"""Lifecycle writes. Every service owns its transaction (purge: one per batch)."""

from .closures import session_close
from .exports import export_record_write, scope_export
from .holds import hold_release, hold_set
from .matching import RedactionRun, redact_matching
from .purge import PurgeResult, purge_run
from .redaction import source_redact

__all__ = [
    "PurgeResult",
    "RedactionRun",
    "export_record_write",
    "hold_release",
    "hold_set",
    "purge_run",
    "redact_matching",
    "scope_export",
    "session_close",
    "source_redact",
]
