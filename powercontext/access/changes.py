"""The append-only record of every change to tokens and grants.

Every writer of ``ApiToken``, ``TokenGrant`` and ``PrincipalGrant`` calls
``change_record`` inside the transaction of its change, so a change and its
record commit or roll back together. ``Actor`` says who made it: a principal
calling the API (with its token and request id), an admin user
(``admin:NAME``) or a command (``cli:NAME``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .models import AccessAction, AccessChange, ApiToken


@dataclass(frozen=True)
class Actor:
    """Who makes a change, and from which request."""

    name: str
    token_id: int | None = None
    request_id: str = ""


SYSTEM = Actor("system")


def change_record(
    *,
    actor: Actor,
    action: AccessAction,
    at: datetime,
    token: ApiToken | None = None,
    principal: str | None = None,
    scope_id: str = "",
    role: str = "",
    **detail: Any,
) -> AccessChange:
    """Append one change record; call it inside the change's transaction."""
    return AccessChange.objects.create(
        at=at,
        actor=actor.name,
        actor_token_id=actor.token_id,
        request_id=actor.request_id,
        action=action,
        token_id=token.pk if token is not None else None,
        token_prefix=token.prefix if token is not None else "",
        principal=principal if principal is not None else token.principal,  # type: ignore[union-attr]
        scope_id=scope_id,
        role=role,
        detail=detail,
    )
