"""Who may manage which tokens and grants (spec/access.md 1), as plain predicates.

An admin grant on a scope manages grants on that scope only; ``*:admin`` manages
everything, ``*`` grants included. A token is *seen* by a caller that administers
any scope it reaches (its own grants and its principal's) and *touched* (revoked,
rotated, its expiry changed) only by one that administers every scope it reaches.
No predicate here ever lets a caller give rights it does not hold itself: the
role it grants is at most admin on a scope it administers, and an expiry never
outlives its own (``lifetime_allows``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from powercontext.principals import ALL_SCOPES, Principal, Role

from .exceptions import NotYourScope


def administers_everything(caller: Principal) -> bool:
    return caller.can_everywhere(Role.ADMIN)


def may_grant(caller: Principal, scope_id: str) -> bool:
    """Whether ``caller`` may give or take grants on ``scope_id`` (``*`` included)."""
    if scope_id == ALL_SCOPES:
        return administers_everything(caller)
    return caller.can(scope_id, Role.ADMIN)


def may_see(caller: Principal, reached: Iterable[str]) -> bool:
    """Whether ``caller`` may read a token reaching the scopes ``reached``."""
    return administers_everything(caller) or any(
        may_grant(caller, scope_id) for scope_id in reached
    )


def may_touch(caller: Principal, reached: Iterable[str]) -> bool:
    """Whether ``caller`` may revoke, rotate or re-date a token reaching ``reached``."""
    scopes = list(reached)
    return administers_everything(caller) or (
        bool(scopes) and all(may_grant(caller, scope_id) for scope_id in scopes)
    )


def administered_scope_ids(caller: Principal) -> set[str] | None:
    """The scope ids ``caller`` administers; None for every scope."""
    if administers_everything(caller):
        return None
    return {
        grant.scope_id
        for grant in caller.grants
        if grant.role == Role.ADMIN and grant.scope_id != ALL_SCOPES
    }


def lifetime_allows(
    *, caller_expires_at: datetime | None, expires_at: datetime | None
) -> bool:
    """Whether a token may be given ``expires_at`` by a caller expiring then."""
    if caller_expires_at is None:
        return True
    return expires_at is not None and expires_at <= caller_expires_at


def scope_managed_or_refuse(caller: Principal, scope_id: str) -> None:
    """Raise ``NotYourScope`` (403) unless ``caller`` may grant on ``scope_id``."""
    if not may_grant(caller, scope_id):
        raise NotYourScope()


def token_touchable_or_refuse(caller: Principal, reached: Iterable[str]) -> None:
    """Raise ``NotYourScope`` (403) unless ``caller`` administers all ``reached``."""
    if not may_touch(caller, reached):
        raise NotYourScope(
            "The token reaches scopes you do not administer; only '*:admin' may "
            "revoke, rotate or re-date it."
        )
