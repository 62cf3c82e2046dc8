"""The answers of the evidence and handoff operations, as documentation.

These models describe the wire shapes in OpenAPI (and an MCP tool's
``outputSchema``); nothing is validated or rendered through them. The renderers
(``renderers.py``) build the same shapes from domain objects. A PreparedHandoff
answer is the domain's own model (``content.PreparedHandoff``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from powercontext import limits
from sources.schemas import SourceRecord, SourceReference

from .citations import ArtifactReference, CitedSource, HandoffCitation
from .content import HandoffContent, Selection
from .hints import ContextSchema
from .references import Purpose, Reason

Status = Literal["available", "unavailable"]


class EvidenceItem(BaseModel):
    source_ref: SourceReference
    status: Status
    reason: Reason | None
    working_note: bool | None = Field(description="Null when no Source exists.")
    expires_at: datetime | None
    source: SourceRecord | None = Field(description="Only when available.")


class EvidenceResolution(BaseModel):
    scope_id: str
    purpose: Purpose
    resolved_at: datetime
    items: list[EvidenceItem]


class CommittedHandoff(BaseModel):
    reference: ArtifactReference
    content: HandoffContent
    source_refs: list[CitedSource]
    artifact_refs: list[ArtifactReference]


class HandoffEvidenceCheck(BaseModel):
    claim: Literal["state", "next_action"]
    state_index: int | None = Field(ge=0)
    status: Status
    unavailable_evidence: list[HandoffCitation] = Field(
        max_length=limits.HANDOFF_CITATIONS_MAX
    )


class HandoffResolution(BaseModel):
    trust: Literal["untrusted_history"]
    status: Literal["empty", "resolved"]
    scope_id: str
    content: HandoffContent | None
    selection: Selection | None
    selected_revision: ArtifactReference | None
    current_revision: ArtifactReference | None
    evidence_checks: list[HandoffEvidenceCheck]


class PreparedContext(BaseModel):
    schema_: ContextSchema = Field(alias="schema")
    status: Literal["ready", "empty"]
    content: str | None
    content_bytes: int = Field(ge=0)
