"""Wire shapes of tokens (docs/api.md), from domain objects (no queries)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from powercontext.text import format_datetime

from .models import ApiToken
from .selectors import TokenView


def _time(value: datetime | None) -> str | None:
    return None if value is None else format_datetime(value)


def _grants(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"scope": scope, "role": role} for scope, role in pairs]


def token_body(view: TokenView) -> dict[str, Any]:
    """A token as listed and read: never its secret."""
    return {
        "token_id": view.token_id,
        "prefix": view.prefix,
        "name": view.name,
        "grants": _grants(view.grants),
        "principal_grants": _grants(view.principal_grants),
        "created_at": _time(view.created_at),
        "created_by": view.created_by,
        "expires_at": _time(view.expires_at),
        "last_used_at": _time(view.last_used_at),
        "revoked_at": _time(view.revoked_at),
    }


def minted_body(token: ApiToken, secret: str) -> dict[str, Any]:
    """A token just minted or rotated: the secret, shown in this answer only."""
    return {
        "token_id": token.pk,
        "token": secret,
        "prefix": token.prefix,
        "name": token.principal,
        "grants": _grants(
            sorted((grant.scope_id, grant.role) for grant in token.grants.all())
        ),
        "created_at": _time(token.created_at),
        "expires_at": _time(token.expires_at),
        "created_by": token.created_by,
    }
