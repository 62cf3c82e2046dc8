"""The answers of the envelope operations, as documentation (OpenAPI, MCP)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from sources.schemas import CaptureReceipt


class Envelope(BaseModel):
    scope_id: str
    session_id: str
    meta: dict[str, str | int | float | bool]
    version: int = Field(ge=1)
    clock: int
    created_at: datetime
    updated_at: datetime


class WorkingNotes(BaseModel):
    notes: str | None
    bytes: int = Field(ge=0)
    max_bytes: int = Field(ge=0)
    version: int | None
    updated_at: datetime | None


class WorkingNotesWrite(WorkingNotes):
    source: CaptureReceipt | None = Field(
        description="The capture receipt; null without a capture."
    )


class EnvelopeSearchItem(BaseModel):
    session_id: str
    version: int = Field(ge=1, description="The envelope's version (its ETag).")
    snippet: str = Field(
        description="The live notes around the first match, at most 256 bytes."
    )


class EnvelopeSearchPage(BaseModel):
    items: list[EnvelopeSearchItem]
    next_cursor: str | None
