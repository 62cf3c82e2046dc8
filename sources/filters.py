"""What a list of a scope's audit rows, or a search of its Sources, may be narrowed to.

The request models build them (``inputs.SourceAuditQuery.filters``,
``inputs.SearchQueryParameters.filters``) and the selectors read them
(``selectors.audit.audit_page``, ``selectors.search.source_search``); they live
beside neither, so
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


@dataclass(frozen=True)
class SearchFilters:
    """What a search of a scope's Sources may be narrowed to (None: any)."""

    working_note: bool | None = None
    session_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
