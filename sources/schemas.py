"""The answers of the registry's operations, as documentation.

These models describe the wire shapes in OpenAPI (and an MCP tool's
``outputSchema``); nothing is validated or rendered through them. The renderers
(``renderers.py``) build the same shapes from domain objects.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from .inputs import ExternalReference, NoteKind


class ScopeDescriptor(BaseModel):
    scope_id: str
    title: str
    summary: str
    parent_scope_id: str | None
    context_references: list[str]
    external_references: list[ExternalReference]
    version: int = Field(ge=1)


class ScopePage(BaseModel):
    items: list[ScopeDescriptor]
    next_cursor: str | None


class SourceReference(BaseModel):
    name: Literal["content"] = Field(description="The source type.")
    source_id: str


class CaptureReceipt(BaseModel):
    status: Literal["accepted"]
    source: SourceReference
    position: int = Field(ge=1)


class SourceRecord(BaseModel):
    receipt_identity: None
    scope_id: str
    source_type: Literal["content"]
    source_id: str
    content: Any = Field(description="The captured JSON value; null in a tombstone.")
    position: int = Field(ge=1)
    content_digest: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")


class SourcePage(BaseModel):
    items: list[SourceRecord]
    next_cursor: str | None


class SourceWindow(BaseModel):
    items: list[SourceRecord]
    next_after: int
    high_watermark: int


class Attempt(BaseModel):
    outcome: Literal["accepted", "replayed", "conflict", "rejected"]
    reason: str | None
    at: datetime
    principal: str
    request_id: str


class AttemptPage(BaseModel):
    items: list[Attempt]
    next_cursor: str | None


class AuditRecord(SourceRecord):
    metadata: dict[str, Any] | None
    working_note: bool
    session_id: str | None
    note_kind: NoteKind | None
    expires_at: datetime | None
    state: Literal["active", "expired", "closed", "purged"]
    created_at: datetime
    created_by: str
    request_id: str
    closed_at: datetime | None
    purged_at: datetime | None
    purge_run: str | None
    attempts_total: int
    attempts: list[Attempt]


class AuditPage(BaseModel):
    items: list[AuditRecord]
    next_cursor: str | None


class MemoryArtifact(BaseModel):
    family: Literal["atomic-memory"]
    artifact_id: str = Field(description="`art_` + 32 hex digits.")
    revision: Literal[1]


class MemoryRecordBody(BaseModel):
    artifact: MemoryArtifact
    kind: str
    text: str = Field(description="As stored: trimmed, Unicode NFC.")
    state: Literal["active"]
    state_version: Literal[0]
    merged_into_id: None


class MemoryMutation(BaseModel):
    changed: Literal[True]
    records: list[MemoryRecordBody] = Field(min_length=1, max_length=1)


class MemoryEntryPage(BaseModel):
    entries: list[MemoryRecordBody]
    next_cursor: str | None


class MemorySearchHit(BaseModel):
    memory: MemoryRecordBody
    score: float = Field(description="1 / (60 + rank), rank from 1.")
    matched_by: list[Literal["text"]]


class MemorySearchResult(BaseModel):
    mode: Literal["text"]
    hits: list[MemorySearchHit]


class SearchItem(BaseModel):
    source_type: Literal["content"]
    source_id: str
    position: int = Field(ge=1)
    is_working_note: bool
    session_id: str | None
    state: Literal["active", "expired", "closed"]
    snippet: str = Field(
        description="The searched text around the first match, at most 256 bytes."
    )
    rank: float = Field(description="Higher is better; within one walk only.")


class SearchPage(BaseModel):
    items: list[SearchItem]
    next_cursor: str | None
