"""Wire shapes of the evidence and handoff answers, from domain objects (no
queries). Handoff values render themselves (``wire()``) in the reference's key
order; these functions assemble the answers around them."""

from __future__ import annotations

from typing import Any

from powercontext.text import format_datetime
from sources.renderers import source_record

from .citations import revision_ref
from .content import PreparedHandoff
from .hints import CONTEXT_SCHEMA
from .references import EvidenceResolution, ResolvedRef
from .selectors import ClaimCheck, SelectedHandoff
from .services import CommittedRevision


def evidence_item(item: ResolvedRef) -> dict[str, Any]:
    """One resolution item; ``working_note`` is null when no Source exists."""
    row = item.row
    expires_at = None if row is None else row["expires_at"]
    return {
        "source_ref": {"name": item.ref.name, "source_id": item.ref.source_id},
        "status": "available" if item.available else "unavailable",
        "reason": None if item.reason is None else item.reason.value,
        "working_note": None if row is None else row["is_working_note"],
        "expires_at": None if expires_at is None else format_datetime(expires_at),
        "source": source_record(row) if item.available else None,
    }


def evidence_resolution_body(resolution: EvidenceResolution) -> dict[str, Any]:
    return {
        "scope_id": resolution.scope_id,
        "purpose": resolution.purpose.value,
        "resolved_at": format_datetime(resolution.resolved_at),
        "items": [evidence_item(item) for item in resolution.items],
    }


def prepared_body(prepared: PreparedHandoff) -> dict[str, Any]:
    """PreparedHandoff, as finalize answers it."""
    return prepared.wire()


def committed_body(committed: CommittedRevision) -> dict[str, Any]:
    """CommittedHandoff, rendered from the stored revision (replays are identical)."""
    content = committed.content
    return {
        "reference": revision_ref(committed.revision.revision).wire(),
        "content": content.wire(),
        "source_refs": [ref.wire() for ref in content.source_refs()],
        "artifact_refs": [ref.wire() for ref in content.artifact_refs()],
    }


def evidence_check(check: ClaimCheck) -> dict[str, Any]:
    return {
        "claim": check.claim.claim,
        "state_index": check.claim.state_index,
        "status": "available" if check.available else "unavailable",
        "unavailable_evidence": [c.wire() for c in check.unavailable],
    }


def resolution_body(selected: SelectedHandoff) -> dict[str, Any]:
    """HandoffResolution: every key always present."""

    def ref(number: int | None) -> dict[str, Any] | None:
        return None if number is None else revision_ref(number).wire()

    content = selected.content
    return {
        "trust": "untrusted_history",
        "status": "empty" if content is None else "resolved",
        "scope_id": selected.scope_id,
        "content": None if content is None else content.wire(),
        "selection": selected.selection,
        "selected_revision": ref(selected.selected_revision),
        "current_revision": ref(selected.current_revision),
        "evidence_checks": [evidence_check(check) for check in selected.checks],
    }


def prepared_context_body(text: str | None) -> dict[str, Any]:
    """PreparedContext; an empty one has null content and never a ``reason``."""
    return {
        "schema": CONTEXT_SCHEMA,
        "status": "empty" if text is None else "ready",
        "content": text,
        "content_bytes": 0 if text is None else len(text.encode("utf-8")),
    }
