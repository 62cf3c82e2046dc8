"""Reads of Sources: one by identity, a scope's journal in pages, the window."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from powercontext.pages import Page, Position, keyset_page

from ..exceptions import ScopeNotFound, SourceNotFound
from ..models import ContentSource, SourceJournalHead
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

    items: list[dict[str, Any]]
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
    (expired ones too, as the reference's list does).

    A walk is a snapshot: its first page fixes the scope's high watermark, and
    Sources captured during the walk are not returned by it. Raises
    ``ScopeNotFound`` on the first page of a scope that does not exist.
    """
    if position is None:
        after, watermark = 0, scope_watermark(scope_id=scope_id)
    else:
        after, watermark = position["after"], position["watermark"]
    rows = list(
        ContentSource.objects.filter(
            scope_id=scope_id, position__gt=after, position__lte=watermark
        )
        .order_by("position")
        .values(*RECORD_FIELDS)[: limit + 1]
    )
    return keyset_page(
        rows, limit, lambda row: {"after": row["position"], "watermark": watermark}
    )


def source_window(*, scope_id: str, after: int, limit: int) -> Window:
    """Up to ``limit`` non-note Sources after position ``after``, ascending.

    ``next_after`` is the last item's position on a full page, else the high
    watermark, so working notes never stall a consumer. Raises ``ScopeNotFound``.
    """
    watermark = scope_watermark(scope_id=scope_id)
    rows = list(
        ContentSource.objects.filter(
            scope_id=scope_id,
            is_working_note=False,
            position__gt=after,
            position__lte=watermark,
        )
        .order_by("position")
        .values(*RECORD_FIELDS)[:limit]
    )
    full = len(rows) == limit
    next_after = rows[-1]["position"] if full else max(watermark, after)
    return Window(rows, next_after, watermark)
