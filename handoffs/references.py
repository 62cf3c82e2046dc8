"""Evidence references and their answers, as values.

What a caller asks to resolve - ``SourceRef`` items for a ``Purpose`` - and what
comes back: a ``Reason`` per unavailable item, ``ResolvedRef`` per item and the
whole ``EvidenceResolution``. ``evidence.evidence_resolve`` computes them; the
request models (``inputs.py``), the answer shapes (``schemas.py``) and the
renderers use them without importing the resolution's queries.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any


class Purpose(StrEnum):
    """What the caller will do with the evidence."""

    HANDOFF = "handoff"  # explicit, exact references: working notes may resolve
    GENERATION = "generation"  # automatic consumers: working notes never resolve


class Reason(StrEnum):
    NOT_FOUND = "not_found"
    NOT_ELIGIBLE = "not_eligible"
    PURGED = "purged"
    CLOSED = "closed"
    EXPIRED = "expired"
    DIGEST_MISMATCH = "digest_mismatch"


@dataclass(frozen=True)
class SourceRef:
    """A citation of one Source identity, optionally pinned to its content digest."""

    name: str  # the source type; the wire calls it ``name``
    source_id: str
    content_digest: str | None = None


@dataclass(frozen=True)
class ResolvedRef:
    """The answer for one ref.

    ``row`` holds the stored Source's fields (``SOURCE_FIELDS`` and its stored
    ``size``) whenever the Source exists, and its ``content`` (the stored canonical
    JSON text) when the item is available and content was asked for; ``None`` for
    ``not_found``.
    """

    ref: SourceRef
    reason: Reason | None
    row: dict[str, Any] | None

    @property
    def available(self) -> bool:
        return self.reason is None


@dataclass(frozen=True)
class EvidenceResolution:
    scope_id: str
    purpose: Purpose
    resolved_at: datetime
    items: list[ResolvedRef]
