"""Answer shapes of the lifecycle operations, for the OpenAPI document only."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel


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
