"""Principal grants: what every token of a principal holds (docs/api.md)."""

from __future__ import annotations

from django.utils import timezone

from powercontext.principals import Principal, Role

from .changes import Actor, change_record
from .models import AccessAction, PrincipalGrant


def principal_grant_add(
    *, principal: Principal, scope_id: str, role: Role, request_id: str
) -> None:
    """Give every token of ``principal`` ``role`` on ``scope_id``, and record it.

    Called inside the transaction that creates the scope (its creator's principal
    becomes its admin): the scope is new, so no principal holds a grant on it yet.
    """
    now = timezone.now()
    PrincipalGrant.objects.create(
        principal=principal.name, scope_id=scope_id, role=role, created_at=now
    )
    change_record(
        actor=Actor(principal.name, principal.token_id, request_id),
        action=AccessAction.PRINCIPAL_GRANT_ADD,
        at=now,
        principal=principal.name,
        scope_id=scope_id,
        role=role,
    )
