"""Session close (docs/api.md)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from powercontext.principals import Principal
from sessions_app.models import SessionEnvelope
from sources.models import SessionClosure
from sources.selectors import scope_require
from sources.services import session_closure_record


def session_close(
    *, principal: Principal, scope_id: str, session_id: str, request_id: str
) -> tuple[SessionClosure, bool]:
    """Record that the session ended; ``(closure, created)``.

    Append-only and idempotent: a second close returns the first record. From
    ``closed_at`` on, the session's Working Notes are ``closed`` and new notes and
    envelope writes are refused (``SessionClosed``). Raises ``ScopeNotFound``.
    One durable transaction that first locks the session's envelope row, when
    there is one: an envelope write either commits before the close or sees it.
    """
    with transaction.atomic(durable=True):
        scope_require(scope_id=scope_id)
        list(
            SessionEnvelope.objects.select_for_update()
            .filter(scope_id=scope_id, session_id=session_id)
            .values_list("pk", flat=True)
        )
        return session_closure_record(
            scope_id=scope_id,
            session_id=session_id,
            principal=principal,
            request_id=request_id,
            now=timezone.now(),
        )
