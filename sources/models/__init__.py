"""The sources app's models: scopes and their journal head (``scopes``), the
registry of Sources, session closures and capture attempts (``registry``), and
remembered Memory records (``memory``)."""

from .memory import MemoryRecord
from .registry import (
    CaptureAttempt,
    CaptureOutcome,
    ContentSource,
    SessionClosure,
    WorkingNoteKind,
)
from .scopes import (
    Scope,
    ScopeContextReference,
    ScopeExternalReference,
    SourceJournalHead,
)

__all__ = [
    "CaptureAttempt",
    "CaptureOutcome",
    "ContentSource",
    "MemoryRecord",
    "Scope",
    "ScopeContextReference",
    "ScopeExternalReference",
    "SessionClosure",
    "SourceJournalHead",
    "WorkingNoteKind",
]
