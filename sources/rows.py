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

from powercontext.canonical import CanonicalTooLarge, canonical_text, utf8_size
from powercontext.exceptions import InvalidRequest
from powercontext.limits import max_source_bytes

from .digests import SourceValue, content_digest_of, value_digest
from .models import CaptureOutcome

CONTENT = "content"


@dataclass(frozen=True)
class SourceRow:
    """Every column of a new ``ContentSource`` but its id and position."""

    scope_id: str
    source_type: str
    source_id: str
    content: str  # canonical JSON text of the content value
    content_bytes: int  # its UTF-8 length, for the response budget
    metadata: dict[str, Any]
    metadata_bytes: int  # the UTF-8 length of its JSON, for the audit's budget
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
        its size and both digests (``digest`` when the caller computed the value
        digest).

        Raises ``InvalidRequest`` (422, ``details.reason`` ``too_large``) when the
        canonical content or metadata is over ``POWERCONTEXT_MAX_SOURCE_BYTES``:
        every capture path builds its row here, so none can store a larger Source.
        """
        stored, size = _canonical_within_cap("content", value.content)
        _, metadata_size = _canonical_within_cap("metadata", value.metadata)
        return cls(
            scope_id=scope_id,
            source_type=CONTENT,
            source_id=source_id,
            content=stored,
            content_bytes=size,
            metadata=value.metadata,
            metadata_bytes=metadata_size,
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


def _canonical_within_cap(field: str, value: Any) -> tuple[str, int]:
    """The canonical JSON text of ``value`` and its UTF-8 size; ``InvalidRequest``
    (422, ``too_large``) over ``POWERCONTEXT_MAX_SOURCE_BYTES``, found without
    keeping more than that much of the text."""
    cap = max_source_bytes()
    try:
        text = canonical_text(value, max_bytes=cap)
    except CanonicalTooLarge as too_large:
        raise InvalidRequest.for_field(
            field,
            "too_large",
            f"The {field} is {too_large.size} bytes as canonical JSON; a Source "
            f"holds at most {cap}.",
            bytes=too_large.size,
            max_bytes=cap,
        ) from None
    return text, utf8_size(text)


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
