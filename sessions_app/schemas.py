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
