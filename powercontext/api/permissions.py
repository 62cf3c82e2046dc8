"""Authorization: who may do what on which scope.

DRF's permission class only demands an authenticated principal (401 otherwise);
views then call ``authorize`` with the scope named in the path or body, after the
body has been validated, so the order of checks is 401 -> 422 -> 403 -> 404.
"""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import BasePermission

from powercontext.exceptions import Forbidden
from powercontext.principals import Principal, Role


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
    if not principal.can(scope_id, role):
        raise Forbidden()


def authorize_everywhere(principal: Principal, role: Role) -> None:
    """Raise 403 unless ``principal`` holds ``role`` on ``*`` (to create scopes)."""
    if not principal.can_everywhere(role):
        raise Forbidden("Creating scopes needs a '*' grant of contributor or more.")
