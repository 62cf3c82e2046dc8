"""Fixtures of the access tests: two scopes and a minting helper over HTTP."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from powercontext.access.tokens import token_create
from powercontext.principals import Role
from tests.conftest import ApiClient, create_scope


@dataclass(frozen=True)
class Scopes:
    mine: str  # administered by the scope admin
    other: str


@pytest.fixture
def scopes(api: ApiClient) -> Scopes:
    return Scopes(create_scope(api, key="mine"), create_scope(api, key="other"))


@dataclass(frozen=True)
class Holder:
    """A token (its id and a client sending it)."""

    token_id: int
    client: ApiClient


@pytest.fixture
def holder() -> Callable[..., Holder]:
    """``holder("scp_x:admin", name=..., expires_in=...)`` - a token and its client."""

    def build(*grants: str, name: str = "holder", expires_in: Any = None) -> Holder:
        parsed = [
            (scope, Role(role))
            for scope, _, role in (g.rpartition(":") for g in grants)
        ]
        expires_at = None if expires_in is None else timezone.now() + expires_in
        token, raw = token_create(principal=name, grants=parsed, expires_at=expires_at)
        return Holder(token.pk, ApiClient(raw))

    return build


def in_days(days: float) -> str:
    return (timezone.now() + timedelta(days=days)).isoformat()
