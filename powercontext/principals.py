"""Who is calling and what they may do: roles, grants and the ``Principal``.

A grant is ``(scope, role)``; the scope is one scope id or ``*`` (every scope).
Roles are ordered: ``viewer`` < ``contributor`` < ``admin``, each including the
ones below it (api.md 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Role(StrEnum):
    VIEWER = "viewer"
    CONTRIBUTOR = "contributor"
    ADMIN = "admin"


ROLE_RANK = {Role.VIEWER: 1, Role.CONTRIBUTOR: 2, Role.ADMIN: 3}
ALL_SCOPES = "*"


@dataclass(frozen=True)
class Grant:
    scope_id: str
    role: Role


@dataclass(frozen=True)
class Principal:
    """The authenticated caller; ``token_id`` is None for static and local callers."""

    name: str
    grants: tuple[Grant, ...] = field(default=())
    token_id: int | None = None
    # False when the grants come from this process's token cache, so they may be
    # up to POWERCONTEXT_TOKEN_CACHE_SECONDS old (access.tokens.token_authenticate).
    fresh: bool = True

    is_authenticated = True  # what DRF and Django ask of ``request.user``

    def can(self, scope_id: str, role: Role) -> bool:
        """Whether a grant on ``scope_id`` (or ``*``) reaches ``role``."""
        needed = ROLE_RANK[role]
        return any(
            grant.scope_id in (scope_id, ALL_SCOPES) and ROLE_RANK[grant.role] >= needed
            for grant in self.grants
        )

    def can_everywhere(self, role: Role) -> bool:
        needed = ROLE_RANK[role]
        return any(
            grant.scope_id == ALL_SCOPES and ROLE_RANK[grant.role] >= needed
            for grant in self.grants
        )

    def visible_scope_ids(self) -> set[str] | None:
        """Scope ids this principal may read; None means every scope."""
        if self.can_everywhere(Role.VIEWER):
            return None
        return {grant.scope_id for grant in self.grants}


STATIC_TOKEN_PRINCIPAL = "static-token"  # noqa: S105 - a principal name
LOCAL_PRINCIPAL = "local"
# Names the service records as who did something without a caller behind them
# (with ``access.changes.SYSTEM``, the actor of code that names none): the Sources
# ``seed_sources`` captures, the principals migration ``api.0006_principals``
# created for a name only a grant used. Reserved (``powercontext.access.identities``),
# so no token acts under them.
SEED_PRINCIPAL = "seed"
MIGRATION_ACTOR = "migration"


def superuser_principal(name: str) -> Principal:
    return Principal(name=name, grants=(Grant(ALL_SCOPES, Role.ADMIN),))
