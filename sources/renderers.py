"""Wire shapes of the registry's answers, from domain objects (no queries)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from powercontext.jsonvalues import RawJSON
from powercontext.text import format_datetime

from .availability import availability_of_row
from .models import MemoryRecord
from .selectors import MemoryHit, ScopeView
from .selectors.search import SearchHit
from .services import Receipt


def scope_descriptor(scope: ScopeView) -> dict[str, Any]:
    """The ScopeDescriptor of ``scope``."""
    return {
        "scope_id": scope.scope_id,
        "title": scope.title,
        "summary": scope.summary,
        "parent_scope_id": scope.parent_scope_id,
        "context_references": scope.context_references,
        "external_references": [
            {"kind": kind, "value": value} for kind, value in scope.external_references
        ],
        "version": scope.version,
    }


def receipt_body(receipt: Receipt) -> dict[str, Any]:
    """The capture receipt, exactly the reference's three keys."""
    return {
        "status": "accepted",
        "source": {"name": receipt.source_type, "source_id": receipt.source_id},
        "position": receipt.position,
    }


def source_record(row: Any) -> dict[str, Any]:
    """The SourceRecord of a row (a dict or an object with the record fields).

    The content is the stored canonical JSON, written into the answer as it is
    (``RawJSON``), never decoded and encoded again; a tombstone's is null.
    """
    fields = row if isinstance(row, dict) else vars(row)
    return {
        "receipt_identity": None,
        "scope_id": fields["scope_id"],
        "source_type": fields["source_type"],
        "source_id": fields["source_id"],
        "content": _raw(fields["content"]),
        "position": fields["position"],
        "content_digest": fields["content_digest"],
    }


def attempt_item(attempt: dict[str, Any]) -> dict[str, Any]:
    return {
        "outcome": attempt["outcome"],
        "reason": attempt["reason"],
        "at": format_datetime(attempt["at"]),
        "principal": attempt["principal"],
        "request_id": attempt["request_id"],
    }


def _raw(text: str | None) -> RawJSON | None:
    return None if text is None else RawJSON(text)


def _time(value: datetime | None) -> str | None:
    return None if value is None else format_datetime(value)


def audit_record(row: dict[str, Any], now: datetime) -> dict[str, Any]:
    expires_at = row["expires_at"]
    state = availability_of_row(row, now)
    return {
        **source_record(row),
        "metadata": _raw(row["metadata_text"]),
        "working_note": row["is_working_note"],
        "session_id": row["session_id"],
        "note_kind": row["note_kind"],
        "expires_at": None if expires_at is None else format_datetime(expires_at),
        "state": state.value,
        "created_at": format_datetime(row["created_at"]),
        "created_by": row["created_by"],
        "request_id": row["request_id"],
        "closed_at": _time(row["closed_at"]),
        "purged_at": _time(row["purged_at"]),
        "purge_run": row["purge_run"],
        "attempts_total": row["attempts_total"],
        "attempts": [attempt_item(attempt) for attempt in row["attempts"]],
    }


def memory_record(record: MemoryRecord) -> dict[str, Any]:
    """A Memory record as the reference renders an Atomic Memory record."""
    return {
        "artifact": {
            "family": "atomic-memory",
            "artifact_id": record.artifact_id,
            "revision": 1,
        },
        "kind": record.kind,
        "text": record.text,
        "state": "active",
        "state_version": 0,
        "merged_into_id": None,
    }


def memory_hit(hit: MemoryHit) -> dict[str, Any]:
    return {
        "memory": memory_record(hit.record),
        "score": hit.score,
        "matched_by": ["text"],
    }


def search_item(hit: SearchHit) -> dict[str, Any]:
    """One search result (``schemas.SearchItem``)."""
    return {
        "source_type": hit.source_type,
        "source_id": hit.source_id,
        "position": hit.position,
        "is_working_note": hit.is_working_note,
        "session_id": hit.session_id,
        "state": hit.state.value,
        "snippet": hit.snippet,
        "rank": float(hit.rank),
    }
