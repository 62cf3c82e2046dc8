"""Request models of the envelope operations: shape only.

The meta rules (reserved keys, owners, types, caps) are domain rules and live in
``meta.py``; here ``meta`` only has to be a JSON object and ``notes`` a string.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, model_validator

from powercontext.inputs import DateTime, Identity, SourceId, StrictInput
from sources.inputs import NoteKind, PageQuery
from sources.search import Match, SearchQuery

from .captures import DEFAULT_NOTE_KIND, NotesCapture


class SessionPath(StrictInput):
    scope_id: Identity
    session_id: Identity = Field(
        description="1..256 characters, not blank; may contain '/' "
        "(percent-encoded or not)."
    )


class EnvelopeWrite(StrictInput):
    meta: dict[str, Any] = Field(
        description="PUT: every host-owned and x- key (absent ones are cleared). "
        "PATCH: worker-owned keys only; null or an empty string clears a key."
    )


class NotesCaptureInput(StrictInput):
    note_kind: NoteKind = DEFAULT_NOTE_KIND
    expires_at: DateTime | None = None
    source_id: SourceId | None = Field(
        default=None,
        description="Default: session-notes:{session_id}:v{version of the notes}.",
    )

    def capture(self) -> NotesCapture:
        return NotesCapture(
            note_kind=self.note_kind,
            expires_at=self.expires_at,
            source_id=self.source_id,
        )


class WorkingNotesPut(StrictInput):
    notes: str = Field(
        description="Trimmed; at most WORKING_NOTES_MAX_BYTES UTF-8 bytes after "
        "trimming; empty clears the notes."
    )
    capture: NotesCaptureInput | None = Field(
        default=None,
        description="Also capture the notes as a Source-backed Working Note, in the "
        "same transaction.",
    )


class EnvelopeSearchQuery(PageQuery):
    """``GET /v1/scopes/{scope_id}/search/envelopes``; ``q`` is checked by
    ``sources.search.SearchQuery``."""

    q: str
    match: Literal["words", "substring"] = "words"

    def search_query(self) -> SearchQuery:
        return SearchQuery.of(self.q, Match(self.match))

    @model_validator(mode="after")
    def check_query(self) -> Self:
        """Refuses the text (422, field ``q``) with the inputs, before the grant."""
        self.search_query()
        return self
