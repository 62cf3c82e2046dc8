"""Keyset pages: the one way every list is cut into pages.

A selector fetches up to ``limit + 1`` rows after a position, in key order, and
returns ``keyset_page(rows, limit, position_of)``: the first ``limit`` rows, and
the position after the last of them when more rows exist. The HTTP layer turns
that position into a signed cursor (``powercontext.api.cursors``); a position is
a small JSON object whose meaning only the selector knows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

Row = TypeVar("Row")
Position = dict[str, Any]


@dataclass(frozen=True)
class Page(Generic[Row]):
    """Rows of one page, and where the next page starts (None on the last).

    ``items`` may be read lazily (pages of stored content are: ``budget.py``).
    """

    items: Iterable[Row]
    next_position: Position | None


def keyset_page(
    rows: Sequence[Row], limit: int, position_of: Callable[[Row], Position]
) -> Page[Row]:
    """Split ``limit + 1`` fetched rows into a page and the next page's position."""
    if len(rows) <= limit:
        return Page(rows, None)
    items = rows[:limit]
    return Page(items, position_of(items[-1]))
