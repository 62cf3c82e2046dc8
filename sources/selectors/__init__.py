"""Reads from the registry, always filtered by scope (``scopes``, ``records``,
``audit``)."""

from .audit import attempt_page, audit_get, audit_page
from .closures import session_closure_find, session_closures
from .memory import MemoryHit, memory_page, memory_search
from .records import (
    SourceIdentity,
    Window,
    scope_watermark,
    source_get,
    source_identity_find,
    source_page,
    source_window,
)
from .scopes import (
    DEFAULT_SCOPE_KEY,
    ScopeView,
    default_scope_id,
    scope_get,
    scope_ids_unknown,
    scope_list,
    scope_require,
)
from .search import SearchFilters, SearchHit, source_search

__all__ = [
    "DEFAULT_SCOPE_KEY",
    "MemoryHit",
    "ScopeView",
    "SearchFilters",
    "SearchHit",
    "SourceIdentity",
    "Window",
    "attempt_page",
    "audit_get",
    "audit_page",
    "default_scope_id",
    "memory_page",
    "memory_search",
    "scope_get",
    "scope_ids_unknown",
    "scope_list",
    "scope_require",
    "scope_watermark",
    "session_closure_find",
    "session_closures",
    "source_get",
    "source_identity_find",
    "source_page",
    "source_search",
    "source_window",
]
