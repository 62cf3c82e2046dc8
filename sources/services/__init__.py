"""Writes to the registry. Every service owns its transaction."""

from .attempts import attempt_record
from .capture import (
    CreatedSource,
    Receipt,
    source_capture,
    source_create,
    working_note_capture,
)
from .scopes import ExternalReference, scope_create

__all__ = [
    "CreatedSource",
    "ExternalReference",
    "Receipt",
    "attempt_record",
    "scope_create",
    "source_capture",
    "source_create",
    "working_note_capture",
]
