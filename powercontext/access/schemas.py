"""The answers of token management, as documentation (OpenAPI, MCP tools).

Nothing is validated or rendered through these; ``renderers.py`` builds the
same shapes.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from .inputs import GrantInput


class TokenDescriptor(BaseModel):
    token_id: int
    prefix: str = Field(description="The visible start of the secret.")
    name: str = Field(description="The principal the token acts as.")
    grants: list[GrantInput] = Field(
        description="The token's own grants on scopes the caller administers."
    )
    principal_grants: list[GrantInput] = Field(
        description="Grants of its principal (a scope's creator is its admin)."
    )
    created_at: datetime
    created_by: str
    expires_at: datetime | None
    last_used_at: datetime | None
    revoked_at: datetime | None


class MintedToken(BaseModel):
    token_id: int
    token: str = Field(description="The secret; shown in this answer only.")
    prefix: str
    name: str
    grants: list[GrantInput]
    created_at: datetime
    expires_at: datetime | None
    created_by: str


class TokenPage(BaseModel):
    items: list[TokenDescriptor]
    next_cursor: str | None
