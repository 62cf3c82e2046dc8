"""Request models of token and grant management (docs/api.md): shape only.

Who may do what, which scopes exist and whether an expiry is in the future are
the services' rules (``services.py``, ``rules.py``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from powercontext import limits
from powercontext.inputs import (
    NOT_BLANK,
    DateTime,
    Identity,
    QueryInteger,
    StrictInput,
    bounded,
)
from powercontext.principals import Role

from .models import GRANT_SCOPE_MAX_LENGTH, PRINCIPAL_MAX_LENGTH

MAX_GRANTS = 64
MAX_GRACE_SECONDS = 30 * 24 * 3600
TOKEN_ID_MAX = 2**63 - 1

RoleName = Literal["viewer", "contributor", "admin"]
GrantScope = Annotated[
    str, StringConstraints(min_length=1, max_length=GRANT_SCOPE_MAX_LENGTH), NOT_BLANK
]
Name = Annotated[
    str, StringConstraints(min_length=1, max_length=PRINCIPAL_MAX_LENGTH), NOT_BLANK
]
TokenId = Annotated[QueryInteger, AfterValidator(bounded(1, TOKEN_ID_MAX))]
Limit = Annotated[QueryInteger, AfterValidator(bounded(1, limits.LIST_LIMIT_MAX))]
Cursor = Annotated[str, StringConstraints(min_length=1, max_length=limits.CURSOR_MAX)]


class GrantInput(StrictInput):
    """One grant: a scope id (or ``*``) and a role."""

    scope: GrantScope
    role: RoleName

    def pair(self) -> tuple[str, Role]:
        return self.scope, Role(self.role)


class TokenMint(StrictInput):
    """Mint a token acting as ``name`` with ``grants``; the secret is shown once."""

    name: Name
    grants: list[GrantInput] = Field(min_length=1, max_length=MAX_GRANTS)
    expires_at: DateTime | None = None

    def grant_pairs(self) -> list[tuple[str, Role]]:
        return [grant.pair() for grant in self.grants]


class TokenListQuery(StrictInput):
    scope_id: Identity | None = None
    limit: Limit = limits.LIST_LIMIT_DEFAULT
    cursor: Cursor | None = None


class TokenPath(StrictInput):
    token_id: TokenId


class TokenGrantPath(StrictInput):
    token_id: TokenId
    scope: GrantScope


class TokenRotate(StrictInput):
    """New secret, same grants; the old one stops now or ``grace_seconds`` later."""

    grace_seconds: Annotated[int, Field(ge=0, le=MAX_GRACE_SECONDS)] = 0


class TokenExpirySet(StrictInput):
    """A new expiry (``null``: never)."""

    expires_at: DateTime | None
