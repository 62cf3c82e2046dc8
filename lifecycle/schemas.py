"""Answer shapes of the lifecycle operations, for the OpenAPI document only."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class SessionClosure(BaseModel):
    scope_id: str
    session_id: str
    closed_at: datetime
    closed_by: str


class LegalHold(BaseModel):
    hold_id: str
    scope_id: str
    session_id: str | None
    reason: str
    set_by: str
    set_at: datetime
    released_at: datetime | None
    released_by: str | None


class LegalHoldPage(BaseModel):
    items: list[LegalHold]
    next_cursor: str | None


class PurgeResult(BaseModel):
    run_id: str
    dry_run: bool
    purged: int
    skipped_held: int
    skipped_cited: int
    envelopes_cleared: int


class RedactedSource(BaseModel):
    source_type: str
    source_id: str
    position: int
    redaction_id: str | None = Field(description="null in a dry run.")


class HeldSource(BaseModel):
    source_type: str
    source_id: str
    position: int
    scope_held: bool
    held_sessions: list[str]


class RedactionRun(BaseModel):
    dry_run: bool
    complete: bool = Field(
        description="false when more than 1000 Sources or envelopes matched: "
        "run again for the rest."
    )
    redacted: list[RedactedSource]
    envelopes: list[str] = Field(
        description="Session ids of the envelopes whose notes are erased."
    )
    held: list[HeldSource]
    held_envelopes: list[str]
