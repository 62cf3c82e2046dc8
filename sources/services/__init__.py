"""Writes to the registry. Every service owns its transaction."""

from .attempts import AttemptLog, attempt_log
from .capture import (
    CreatedSource,
    Receipt,
    source_capture,
    source_create,
    working_note_capture,
)
from .lifecycle import session_closure_record, sources_tombstone
from .memory import memory_remember
from .scopes import default_scope_create, scope_create

__all__ = [
    "AttemptLog",
    "CreatedSource",
    "Receipt",
    "attempt_log",
    "default_scope_create",
    "memory_remember",
    "scope_create",
    "session_closure_record",
    "source_capture",
    "source_create",
    "sources_tombstone",
    "working_note_capture",
]
