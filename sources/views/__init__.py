"""Registry views, one module per room of the API: scopes, capture and Sources;
audit and attempts."""

from .audit import SourceAttemptsView, SourceAuditCollectionView, SourceAuditDetailView
from .registry import (
    CaptureContentView,
    CaptureWorkingNoteView,
    ScopeCollectionView,
    ScopeDetailView,
    SourceCollectionView,
    SourceDetailView,
    SourceWindowView,
)

__all__ = [
    "CaptureContentView",
    "CaptureWorkingNoteView",
    "ScopeCollectionView",
    "ScopeDetailView",
    "SourceAttemptsView",
    "SourceAuditCollectionView",
    "SourceAuditDetailView",
    "SourceCollectionView",
    "SourceDetailView",
    "SourceWindowView",
]
