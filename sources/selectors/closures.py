"""Reads of session closures (docs/api.md)."""

from __future__ import annotations

from django.db.models import QuerySet

from ..models import SessionClosure


def session_closures(*, scope_id: str, session_id: str) -> QuerySet[SessionClosure]:
    """The closure of the session (one row or none), as a queryset to annotate."""
    return SessionClosure.objects.filter(scope_id=scope_id, session_id=session_id)


def session_closure_find(*, scope_id: str, session_id: str) -> SessionClosure | None:
    """The closure of the session, or None while it is open. One query."""
    return session_closures(scope_id=scope_id, session_id=session_id).first()
