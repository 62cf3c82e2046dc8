"""The envelope row lock every envelope write takes, and the session's state read
with it (docs/api.md: a closed session's envelope takes no writes)."""

from __future__ import annotations

from django.db.models import Exists

from sources.selectors import session_closure_find, session_closures

from ..models import SessionEnvelope


def locked_envelope(scope_id: str, session_id: str) -> SessionEnvelope | None:
    """The envelope row, locked, with ``is_closed`` read in the same query."""
    try:
        return (
            SessionEnvelope.objects.select_for_update()
            .annotate(
                is_closed=Exists(
                    session_closures(scope_id=scope_id, session_id=session_id)
                )
            )
            .get(scope_id=scope_id, session_id=session_id)
        )
    except SessionEnvelope.DoesNotExist:
        return None


def session_is_closed(
    envelope: SessionEnvelope | None, scope_id: str, session_id: str
) -> bool:
    """Whether the session is closed: read with the lock, or looked up when the
    envelope does not exist yet."""
    if envelope is None:
        return (
            session_closure_find(scope_id=scope_id, session_id=session_id) is not None
        )
    return bool(envelope.is_closed)  # type: ignore[attr-defined]
