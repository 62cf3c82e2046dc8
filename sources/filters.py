"""What a list of a scope's audit rows may be narrowed to.

The request model builds it (``inputs.SourceAuditQuery.filters``) and the audit
selector reads it (``selectors.audit.audit_page``); it lives beside neither, so
request models import no selector (docs/architecture.md, "What may import what").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from .availability import Availability


@dataclass(frozen=True)
class AuditFilters:
    """Each field None means "any"; ``state`` is the availability of the row."""

    working_note: bool | None = None
    session_id: str | None = None
    note_kind: str | None = None
    state: Availability | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
