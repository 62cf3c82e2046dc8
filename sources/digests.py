"""The value document of a Source and its digests - computed here and nowhere else.

Capture, the bulk seeder, importers and the lifecycle jobs all call
``value_digest``; see docs/decisions/0001-value-digest.md for why ``true`` and
``1`` differ while ``1`` and ``1.0`` are equal.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from powercontext.canonical import canonical_text
from powercontext.text import epoch_microseconds


@dataclass(frozen=True)
class SourceValue:
    """What a caller decides about a Source: equal values replay, others conflict."""

    content: Any
    metadata: dict[str, Any]
    working_note: bool = False
    session_id: str | None = None
    note_kind: str | None = None
    expires_at: datetime | None = None

    def document(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "metadata": self.metadata,
            "working_note": self.working_note,
            "session_id": self.session_id,
            "note_kind": self.note_kind,
            "expires_at": None
            if self.expires_at is None
            else epoch_microseconds(self.expires_at),
        }


def value_digest(value: SourceValue, *, stored_content: str | None = None) -> str:
    """Hex SHA-256 of the RFC 8785 canonical JSON of ``value``'s document.

    ``stored_content`` - the content's canonical text, when the caller has it - is
    not serialised again. The document's keys sort as ``content``, ``expires_at``,
    ``metadata``, ``note_kind``, ``session_id``, ``working_note``, so its canonical
    form is written here member by member, the same bytes as
    ``canonical_text(value.document())`` (a property test holds them equal).
    """
    content = (
        stored_content if stored_content is not None else canonical_text(value.content)
    )
    expires = (
        "null"
        if value.expires_at is None
        else str(epoch_microseconds(value.expires_at))
    )
    text = (
        f'{{"content":{content},"expires_at":{expires},'
        f'"metadata":{canonical_text(value.metadata)},'
        f'"note_kind":{canonical_text(value.note_kind)},'
        f'"session_id":{canonical_text(value.session_id)},'
        f'"working_note":{"true" if value.working_note else "false"}}}'
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_digest_of(stored_content: str) -> str:
    """``sha256:`` + hex SHA-256 of the canonical JSON text (as stored)."""
    return "sha256:" + hashlib.sha256(stored_content.encode("utf-8")).hexdigest()
