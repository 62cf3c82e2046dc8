"""Reads of tokens and grants for their managers (spec/access.md 1).

A caller sees a token when it administers a scope the token reaches, through
the token's own grants or its principal's, and then only the grants on scopes it
administers (all of them for ``*:admin``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from powercontext.pages import Page, Position, keyset_page
from powercontext.principals import Principal

from .exceptions import TokenNotFound
from .models import ApiToken, PrincipalGrant
from .rules import (
    administered_scope_ids,
    may_grant,
    may_see,
    scope_managed_or_refuse,
)


@dataclass(frozen=True)
class TokenView:
    """A token as a manager sees it (never its secret or hash)."""

    token_id: int
    prefix: str
    name: str
    grants: list[tuple[str, str]]
    principal_grants: list[tuple[str, str]]
    created_at: datetime
    created_by: str
    expires_at: datetime | None
    last_used_at: datetime | None
    revoked_at: datetime | None


def token_reach(token: ApiToken) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The token's own grants and its principal's, as (scope, role) pairs."""
    own = sorted((grant.scope_id, grant.role) for grant in token.grants.all())
    inherited = sorted(
        PrincipalGrant.objects.filter(principal=token.principal).values_list(
            "scope_id", "role"
        )
    )
    return own, inherited


def token_view(
    token: ApiToken,
    *,
    caller: Principal,
    principal_grants: list[tuple[str, str]],
) -> TokenView:
    """``token`` with only the grants ``caller`` may see."""
    own = sorted((grant.scope_id, grant.role) for grant in token.grants.all())
    return TokenView(
        token_id=token.pk,
        prefix=token.prefix,
        name=token.principal,
        grants=[pair for pair in own if may_grant(caller, pair[0])],
        principal_grants=[
            pair for pair in principal_grants if may_grant(caller, pair[0])
        ],
        created_at=token.created_at,
        created_by=token.created_by,
        expires_at=token.expires_at,
        last_used_at=token.last_used_at,
        revoked_at=token.revoked_at,
    )


@dataclass(frozen=True)
class SeenToken:
    """A token ``caller`` may see, with what it reaches (scope, role pairs)."""

    token: ApiToken
    own: list[tuple[str, str]]
    inherited: list[tuple[str, str]]

    def reached(self) -> list[str]:
        return [scope for scope, _ in self.own + self.inherited]


def token_seen(*, caller: Principal, token_id: int, lock: bool = False) -> SeenToken:
    """The token ``token_id`` if ``caller`` may see it: the visibility rule of
    every token route (read, re-date, revoke, rotate, grants).

    Raises ``TokenNotFound`` (404) both when no token has the id and when it
    reaches no scope ``caller`` administers - the same answer, so token ids
    cannot be probed. ``lock`` locks the row for the caller's transaction
    (its grants are then read afresh, never from a prefetch).
    """
    tokens = ApiToken.objects.select_for_update() if lock else ApiToken.objects
    token = tokens.filter(pk=token_id).first()
    if token is None:
        raise TokenNotFound()
    own, inherited = token_reach(token)
    seen = SeenToken(token, own, inherited)
    if not may_see(caller, seen.reached()):
        raise TokenNotFound()
    return seen


def token_get(*, caller: Principal, token_id: int) -> TokenView:
    """The token ``token_id`` as ``caller`` may see it; ``TokenNotFound`` when
    there is none or ``caller`` may not see it (``token_seen``)."""
    seen = token_seen(caller=caller, token_id=token_id)
    return token_view(seen.token, caller=caller, principal_grants=seen.inherited)


def token_list(
    *,
    caller: Principal,
    scope_id: str | None,
    position: Position | None,
    limit: int,
) -> Page[TokenView]:
    """A page of the tokens ``caller`` sees (on ``scope_id`` only when given), by id.

    Raises ``NotYourScope`` when ``scope_id`` is a scope ``caller`` does not
    administer. Three queries: the tokens, their grants, their principals' grants.
    """
    tokens = ApiToken.objects.prefetch_related("grants")
    if scope_id is not None:
        scope_managed_or_refuse(caller, scope_id)
        tokens = tokens.filter(_reaching({scope_id}))
    else:
        administered = administered_scope_ids(caller)
        if administered is not None:
            tokens = tokens.filter(_reaching(administered))
    if position is not None:
        tokens = tokens.filter(pk__gt=position["after"])
    rows = list(tokens.distinct().order_by("pk")[: limit + 1])
    inherited: dict[str, list[tuple[str, str]]] = {}
    for principal, scope, role in PrincipalGrant.objects.filter(
        principal__in={token.principal for token in rows}
    ).values_list("principal", "scope_id", "role"):
        inherited.setdefault(principal, []).append((scope, role))
    views = [
        token_view(
            token, caller=caller, principal_grants=inherited.get(token.principal, [])
        )
        for token in rows
    ]
    return keyset_page(views, limit, lambda view: {"after": view.token_id})


def _reaching(scope_ids: set[str]) -> Q:
    """Tokens with a grant of their own, or of their principal, on ``scope_ids``."""
    principals = PrincipalGrant.objects.filter(scope_id__in=scope_ids).values(
        "principal"
    )
    return Q(grants__scope_id__in=scope_ids) | Q(principal__in=principals)
