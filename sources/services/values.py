"""What a captured value may be, and how a Working Note's value is built: the
server-reserved receipt schema and ``kind``, and the metadata the server writes
for a note (used by capture and the importer alike)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from powercontext.text import format_datetime
from sources.digests import SourceValue
from sources.exceptions import CaptureRejected

RESERVED_RECEIPT_SCHEMA = "powercontext.handoff-receipt.v1"
RESERVED_KIND = "working_note"


def working_note_value(
    *, content: str, session_id: str, note_kind: str, expires_at: datetime | None
) -> SourceValue:
    """The value a Working Note is stored as: its fields, and the descriptive
    metadata the server writes for it (the importer builds notes here too)."""
    metadata: dict[str, Any] = {
        "kind": RESERVED_KIND,
        "session_id": session_id,
        "note_kind": note_kind,
    }
    if expires_at is not None:
        metadata["expires_at"] = format_datetime(expires_at)
    return SourceValue(
        content=content,
        metadata=metadata,
        working_note=True,
        session_id=session_id,
        note_kind=note_kind,
        expires_at=expires_at,
    )


def generic_capture_rule(
    content: str, metadata: dict[str, Any]
) -> CaptureRejected | None:
    if is_reserved_receipt(content):
        return reserved_schema_rejection()
    if metadata.get("kind") == RESERVED_KIND:
        return CaptureRejected(
            reason="reserved_kind",
            field="metadata.kind",
            message=(
                'metadata.kind "working_note" is reserved: capture working notes '
                "with POST /v1/sources/working-notes."
            ),
            operation="POST /v1/sources/working-notes",
        )
    return None


def is_reserved_receipt(content: Any) -> bool:
    """Whether ``content`` is (or is a JSON string of) a reserved receipt object."""
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except (ValueError, RecursionError):
            return False
    return (
        isinstance(content, dict) and content.get("schema") == RESERVED_RECEIPT_SCHEMA
    )


def reserved_schema_rejection() -> CaptureRejected:
    return CaptureRejected(
        reason="reserved_schema",
        field="content",
        detail_reason="uses a server-reserved handoff receipt schema",
    )
