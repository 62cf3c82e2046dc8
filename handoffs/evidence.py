"""Evidence resolution (docs/api.md): which cited Sources still resolve.

``evidence_resolve`` is the one function every consumer calls - the HTTP operation
``POST /v1/scopes/{scope_id}/evidence/resolve`` and the handoff operations alike.
Its guarantees:

- **Constant cost.** One query, whatever the number of refs: the scope row
  left-joined to every Source of that scope whose identity is among the refs. The
  same query tells an unknown scope (no row at all) from missing Sources (NULLs).
  With content asked for, a second query reads the content of the available
  Sources, each identity once however often it is cited.
- **A bounded answer** (docs/api.md). The first query reads each Source's
  stored size, not its content; when the available content of all the items
  together would pass ``POWERCONTEXT_MAX_RESPONSE_BYTES``, the call is refused
  (``EvidenceTooLarge``, naming how many leading refs fit) before any content is
  read.
- **Never outside the scope.** The join is on the scope's own Sources.
- **One clock.** Every rule compares against the single ``now`` of the call.
- **Exact bytes or nothing** (invariant 5). A Source's content is returned only
  when the item is available; a pinned ``content_digest`` that differs from the
  stored one makes the item ``digest_mismatch`` and its content is dropped.
- **Items in request order**, one per ref, duplicates answered independently.

When several reasons apply, the first wins, in docs/api.md's order: ``not_found``
(decided by the absence of a row), then the rules of ``_RULES`` in table order -
the order of that table *is* the precedence. Whether a note has expired is the
registry's one definition of availability (``sources.availability``), and so
are the lifecycle reasons ``purged`` and ``closed``: the rows are read with their
tombstone time and their session's close instant, and one call to
``availability_of_row`` decides all three.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import F, FilteredRelation, Q
from django.utils import timezone

from sources.availability import (
    Availability,
    availability_of_row,
    session_closed_at,
)
from sources.exceptions import ScopeNotFound
from sources.models import ContentSource, Scope
from sources.selectors.budget import stored_size

from .exceptions import EvidenceTooLarge
from .references import EvidenceResolution, Purpose, Reason, ResolvedRef, SourceRef


@dataclass(frozen=True)
class _Candidate:
    """What a rule looks at: the ref, the stored row, the purpose and the clock."""

    ref: SourceRef
    row: dict[str, Any]
    purpose: Purpose
    now: datetime


def _not_eligible(candidate: _Candidate) -> bool:
    return candidate.purpose is Purpose.GENERATION and candidate.row["is_working_note"]


def _in_state(state: Availability) -> Callable[[_Candidate], bool]:
    def applies(candidate: _Candidate) -> bool:
        return availability_of_row(candidate.row, candidate.now) is state

    return applies


def _digest_mismatch(candidate: _Candidate) -> bool:
    pinned = candidate.ref.content_digest
    return pinned is not None and pinned != candidate.row["content_digest"]


# The rules for a Source that exists; their order is the precedence (docs/api.md:
# ``not_found`` is decided before them, by the absence of a row).
_RULES: tuple[tuple[Reason, Callable[[_Candidate], bool]], ...] = (
    (Reason.NOT_ELIGIBLE, _not_eligible),
    (Reason.PURGED, _in_state(Availability.PURGED)),
    (Reason.CLOSED, _in_state(Availability.CLOSED)),
    (Reason.EXPIRED, _in_state(Availability.EXPIRED)),
    (Reason.DIGEST_MISMATCH, _digest_mismatch),
)

SOURCE_FIELDS = (
    "id",
    "scope_id",
    "source_type",
    "source_id",
    "position",
    "content_digest",
    "is_working_note",
    "expires_at",
    "purged_at",
)


def reason_for(
    ref: SourceRef, row: dict[str, Any] | None, purpose: Purpose, now: datetime
) -> Reason | None:
    """Why ``ref`` is unavailable (the first applicable reason), or None."""
    if row is None:
        return Reason.NOT_FOUND
    candidate = _Candidate(ref=ref, row=row, purpose=purpose, now=now)
    for reason, applies in _RULES:
        if applies(candidate):
            return reason
    return None


def evidence_resolve(
    *,
    scope_id: str,
    purpose: Purpose,
    refs: Sequence[SourceRef],
    now: datetime | None = None,
    include_content: bool = True,
) -> EvidenceResolution:
    """Resolve ``refs`` in ``scope_id`` for ``purpose``; one query for any number
    (two with content).

    Returns one ``ResolvedRef`` per ref, in order. ``now`` defaults to a single
    ``timezone.now()``; callers that already took the request's clock pass it.
    ``include_content=False`` (the handoff operations only ask *whether* evidence
    resolves) reads no content at all.

    Raises ``ScopeNotFound`` when the scope does not exist and ``EvidenceTooLarge``
    when the content of the available items would pass the response budget. Takes
    no locks; the caller authorizes. Refs beyond
    ``powercontext.limits.EVIDENCE_REFS_MAX`` are the request model's concern.
    """
    now = now or timezone.now()
    rows = _fetch(scope_id, refs)
    items = []
    for ref in refs:
        row = rows.get((ref.name, ref.source_id))
        reason = reason_for(ref, row, purpose, now)
        items.append(ResolvedRef(ref=ref, reason=reason, row=row))
    if include_content:
        items = _with_content(items)
    return EvidenceResolution(
        scope_id=scope_id, purpose=purpose, resolved_at=now, items=items
    )


def _with_content(items: list[ResolvedRef]) -> list[ResolvedRef]:
    """``items`` with the content of the available ones, within the budget."""
    available = [item.row for item in items if item.available and item.row]
    _check_budget([row["size"] for row in available])
    contents = _contents({row["id"] for row in available})
    return [
        replace(item, row={**item.row, "content": contents[item.row["id"]]})
        if item.available and item.row
        else item
        for item in items
    ]


def _check_budget(sizes: Sequence[int]) -> None:
    """Refuse an answer whose content would pass the response budget; the error
    says how many leading available items fit (at least one always does)."""
    budget = settings.POWERCONTEXT_MAX_RESPONSE_BYTES
    total = 0
    for fitting, size in enumerate(sizes):
        total += size
        if total > budget and fitting:
            raise EvidenceTooLarge(
                size=sum(sizes), max_bytes=budget, available_that_fit=fitting
            )


def _contents(ids: set[int]) -> dict[int, str]:
    """The stored content of the Sources ``ids``, each read once."""
    if not ids:
        return {}
    return dict(
        ContentSource.objects.filter(id__in=sorted(ids)).values_list("id", "content")
    )


def _fetch(
    scope_id: str, refs: Sequence[SourceRef]
) -> dict[tuple[str, str], dict[str, Any]]:
    """The scope's Sources among ``refs``, by identity, with their stored size and
    without their content; ScopeNotFound if no scope.

    The scope row LEFT JOINs its Sources filtered by the refs' types and ids (a
    superset of the identities asked for; exact pairs are matched in Python). No
    row at all means no scope; a row of NULLs means a scope without those Sources.
    """
    scope = Scope.objects.filter(scope_id=scope_id)
    if not refs:
        if not scope.exists():
            raise ScopeNotFound()
        return {}
    columns = {f"cited_{field}": F(f"cited__{field}") for field in SOURCE_FIELDS}
    joined = scope.annotate(
        cited=FilteredRelation(
            "sources",
            condition=Q(
                sources__source_type__in=sorted({ref.name for ref in refs}),
                sources__source_id__in=sorted({ref.source_id for ref in refs}),
            ),
        )
    ).values(
        **columns,
        cited_size=stored_size("cited__content"),
        cited_closed_at=session_closed_at("cited__"),
    )
    found = list(joined)
    if not found:
        raise ScopeNotFound()
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for values in found:
        if values["cited_id"] is None:
            continue
        row = {
            field: values[f"cited_{field}"]
            for field in (*SOURCE_FIELDS, "size", "closed_at")
        }
        rows[(row["source_type"], row["source_id"])] = row
    return rows
