"""The rows a capture writes - a Source and its capture attempts - spelled once.

Every writer of the registry builds its rows here: capture (``services.capture``),
the journal statement that inserts them (``journal.py``, whose SQL column lists
are generated from these fields), the attempt log and the bulk seeder. A column
added to ``ContentSource`` or ``CaptureAttempt`` is added to the dataclass here,
and every writer follows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from .digests import SourceValue, canonical_content, content_digest_of, value_digest
from .models import CaptureOutcome

CONTENT = "content"


@dataclass(frozen=True)
class SourceRow:
    """Every column of a new ``ContentSource`` but its id and position."""

    scope_id: str
    source_type: str
    source_id: str
    content: str  # canonical JSON text of the content value
    metadata: dict[str, Any]
    is_working_note: bool
    session_id: str | None
    note_kind: str | None
    expires_at: datetime | None
    value_digest: str
    content_digest: str
    created_at: datetime
    created_by: str
    request_id: str

    @classmethod
    def of(
        cls,
        *,
        scope_id: str,
        source_id: str,
        value: SourceValue,
        digest: str | None = None,
        principal: str,
        request_id: str,
        now: datetime,
    ) -> SourceRow:
        """The row of ``value`` under ``(scope_id, source_id)``: canonical content,
        both digests (``digest`` when the caller computed the value digest)."""
        stored = canonical_content(value.content)
        return cls(
            scope_id=scope_id,
            source_type=CONTENT,
            source_id=source_id,
            content=stored,
            metadata=value.metadata,
            is_working_note=value.working_note,
            session_id=value.session_id,
            note_kind=value.note_kind,
            expires_at=value.expires_at,
            value_digest=digest or value_digest(value, stored_content=stored),
            content_digest=content_digest_of(stored),
            created_at=now,
            created_by=principal,
            request_id=request_id,
        )

    def values(self) -> tuple[Any, ...]:
        """The column values in ``SOURCE_FIELDS`` order, ``metadata`` as JSON text."""
        return tuple(
            json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else value
            for value in vars(self).values()
        )

    def accepted_attempt(self) -> AttemptRow:
        """The ``accepted`` attempt written with this Source, in its transaction."""
        return AttemptRow(
            outcome=CaptureOutcome.ACCEPTED.value,
            reason=None,
            **{
                column: getattr(self, name)
                for column, name in ACCEPTED_ATTEMPT_FROM_SOURCE.items()
            },
        )


@dataclass(frozen=True)
class AttemptRow:
    """Every column of a ``CaptureAttempt`` but its id."""

    scope_id: str
    source_type: str
    source_id: str
    outcome: str
    reason: str | None
    value_digest: str
    principal: str
    request_id: str
    at: datetime


SOURCE_FIELDS = tuple(field.name for field in fields(SourceRow))
ATTEMPT_FIELDS = tuple(field.name for field in fields(AttemptRow))
# How the accepted attempt's columns come from the Source row (journal.py's SQL).
ACCEPTED_ATTEMPT_FROM_SOURCE = {
    "scope_id": "scope_id",
    "source_type": "source_type",
    "source_id": "source_id",
    "value_digest": "value_digest",
    "principal": "created_by",
    "request_id": "request_id",
    "at": "created_at",
}
