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

from powercontext.canonical import canonical_json, canonical_sha256
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


def value_digest(value: SourceValue) -> str:
    """Hex SHA-256 of the RFC 8785 canonical JSON of ``value``'s document."""
    return canonical_sha256(value.document())


def canonical_content(content: Any) -> str:
    """The stored form of ``content``: its RFC 8785 canonical JSON text."""
    return canonical_json(content).decode("utf-8")


def content_digest_of(stored_content: str) -> str:
    """``sha256:`` + hex SHA-256 of the canonical JSON text (as stored)."""
    return "sha256:" + hashlib.sha256(stored_content.encode("utf-8")).hexdigest()
