"""Authorization: who may do what on which scope.

DRF's permission class only demands an authenticated principal (401 otherwise);
views then call ``authorize`` with the scope named in the path or body, after the
body has been validated, so the order of checks is 401 -> 422 -> 403 -> 404.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission

from powercontext.access.tokens import TokenRejected, principal_reload
from powercontext.exceptions import Forbidden
from powercontext.principals import Principal, Role

from .exceptions import Unauthorized


class IsAuthenticatedPrincipal(BasePermission):
    def has_permission(self, request: Any, view: Any) -> bool:
        return isinstance(request.user, Principal)


def principal_of(request: Any) -> Principal:
    """The authenticated principal of a DRF request (after the permission check)."""
    principal = request.user
    assert isinstance(principal, Principal), "views run after IsAuthenticatedPrincipal"
    return principal


def authorize(principal: Principal, scope_id: str, role: Role) -> None:
    """Raise 403 unless ``principal`` holds ``role`` (or more) on ``scope_id`` or ``*``.

    Also answers 403 for a scope that does not exist, so a stranger cannot probe
    which scope ids exist.
    """
    if principal.can(scope_id, role) or current(principal).can(scope_id, role):
        return
    raise Forbidden()


def authorize_everywhere(principal: Principal, role: Role) -> None:
    """Raise 403 unless ``principal`` holds ``role`` on ``*`` (to create scopes)."""
    if principal.can_everywhere(role) or current(principal).can_everywhere(role):
        return
    raise Forbidden("Creating scopes needs a '*' grant of contributor or more.")


def current(principal: Principal) -> Principal:
    """``principal`` with grants read now when they came from the token cache.

    Called before refusing, so a grant given a moment ago (a scope's creator
    becomes its admin) is never refused for a stale cache, and by lists that
    show what the grants reach. 401 if the token was revoked meanwhile.
    """
    try:
        return principal_reload(principal)
    except TokenRejected:
        raise Unauthorized("The bearer token is unknown, revoked or expired.") from None
