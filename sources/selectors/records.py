"""Reads of Sources: one by identity, a scope's journal in pages, the window."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Subquery, Value

from powercontext.db import replica
from powercontext.limits import max_response_bytes
from powercontext.pages import Page, Position

from ..exceptions import ScopeNotFound, SourceNotFound
from ..models import ContentSource, SourceJournalHead
from .budget import admit, load, stored_size
from .scopes import scope_require

RECORD_FIELDS = (
    "scope_id",
    "source_type",
    "source_id",
    "content",
    "position",
    "content_digest",
)


@dataclass(frozen=True)
class SourceIdentity:
    """What capture needs to classify an existing identity."""

    position: int
    value_digest: str


@dataclass(frozen=True)
class Window:
    """A page of the generation window (api.md 6.2)."""

    items: Iterable[dict[str, Any]]  # read lazily
    next_after: int
    high_watermark: int


def scope_watermark(*, scope_id: str) -> int:
    """The scope's last journal position (its high watermark); raises ScopeNotFound.

    Every position at or below it is committed: the head advances in the same
    transaction as the insert that uses the position.
    """
    position = (
        SourceJournalHead.objects.filter(scope_id=scope_id)
        .values_list("last_position", flat=True)
        .first()
    )
    if position is None:
        raise ScopeNotFound()
    return position


def source_identity_find(
    *, scope_id: str, source_type: str, source_id: str
) -> SourceIdentity | None:
    """The position and value digest stored for an identity, or None."""
    row = (
        ContentSource.objects.filter(
            scope_id=scope_id, source_type=source_type, source_id=source_id
        )
        .values_list("position", "value_digest")
        .first()
    )
    return None if row is None else SourceIdentity(*row)


def source_get(*, scope_id: str, source_type: str, source_id: str) -> dict[str, Any]:
    """One Source's record fields; raises ``SourceNotFound`` or ``ScopeNotFound``."""
    row = (
        ContentSource.objects.filter(
            scope_id=scope_id, source_type=source_type, source_id=source_id
        )
        .values(*RECORD_FIELDS)
        .first()
    )
    if row is None:
        scope_require(scope_id=scope_id)
        raise SourceNotFound()
    return row


def source_page(
    *, scope_id: str, position: Position | None, limit: int
) -> Page[dict[str, Any]]:
    """A page of the scope's Sources in journal order, working notes included
    (expired ones too, as the reference's list does); its items are read lazily.

    A walk is a snapshot: its first page fixes the scope's high watermark, and
    Sources captured during the walk are not returned by it. A page stops early
    at the response budget (``budget.py``), ``limit`` is a maximum. Raises
    ``ScopeNotFound`` on the first page of a scope that does not exist. Two
    queries (sizes and watermark, then the rows) for a page under 4 MiB.
    """
    after = 0 if position is None else position["after"]
    if position is not None:  # a replica must hold the whole snapshot
        replica.stay_on_replica_if(
            lambda: _has_reached(scope_id, position["watermark"])
        )
    watermark: Any = (
        _watermark_of(scope_id) if position is None else Value(position["watermark"])
    )
    rows = ContentSource.objects.filter(
        scope_id=scope_id, position__gt=after, position__lte=watermark
    )
    sized = list(
        rows.order_by("position")
        .annotate(size=stored_size("content"), mark=watermark)
        .values_list("position", "size", "mark")[: limit + 1]
    )
    if not sized:
        scope_require(scope_id=scope_id)
        return Page([], None)
    mark = sized[0][2]
    admission = admit(
        [(p, size) for p, size, _ in sized], limit=limit, budget=max_response_bytes()
    )
    following = {"after": admission.last, "watermark": mark} if admission.more else None
    return Page(load(rows, RECORD_FIELDS, admission), following)


def source_window(*, scope_id: str, after: int, limit: int) -> Window:
    """Up to ``limit`` non-note Sources after position ``after``, ascending, within
    the response budget.

    ``next_after`` is the last item's position on a full page (or one the budget
    cut short), else the high watermark, so working notes never stall a
    consumer. Raises ``ScopeNotFound``.
    """
    watermark = _watermark_of(scope_id)
    rows = ContentSource.objects.filter(
        scope_id=scope_id,
        is_working_note=False,
        position__gt=after,
        position__lte=watermark,
    )
    sized = list(
        rows.order_by("position")
        .annotate(size=stored_size("content"), mark=watermark)
        .values_list("position", "size", "mark")[:limit]
    )
    # Without rows the page cannot say the watermark: ask (ScopeNotFound too).
    watermark = sized[0][2] if sized else scope_watermark(scope_id=scope_id)
    admission = admit(
        [(at, size) for at, size, _ in sized], limit=limit, budget=max_response_bytes()
    )
    cut = admission.more or len(sized) == limit
    next_after = admission.last if cut and admission.last else max(watermark, after)
    return Window(load(rows, RECORD_FIELDS, admission), next_after, watermark)


def _has_reached(scope_id: str, watermark: int) -> bool:
    return SourceJournalHead.objects.filter(
        scope_id=scope_id, last_position__gte=watermark
    ).exists()


def _watermark_of(scope_id: str) -> Any:
    """The scope's high watermark as a subquery (read with the page's sizes)."""
    return Subquery(
        SourceJournalHead.objects.filter(scope_id=scope_id).values("last_position")[:1]
    )
