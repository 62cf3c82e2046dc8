"""Pages that stop at the response budget (docs/api.md).

No answer carries more than ``POWERCONTEXT_MAX_RESPONSE_BYTES`` of stored
content, and that is decided before any content is read: a page is read in two
steps. First the sizes - each Source's stored byte count (``content_bytes``, and
``metadata_bytes`` where the answer shows metadata; computed from the stored text
for rows older than those columns) - of up to ``limit + 1`` rows; the rows that
fit the budget are admitted (the first always: one Source is at most
``POWERCONTEXT_MAX_SOURCE_BYTES``), and the page stops there with a cursor for the
rest, whatever ``limit`` asked. Then the admitted rows themselves, in chunks of a
few MiB each, lazily, so an answer is written while it is read and never sits in
the worker whole.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import BigIntegerField, Expression, F, Func, QuerySet
from django.db.models.functions import Coalesce

CHUNK_BYTES = 4 * 1024 * 1024


class OctetLength(Func):
    """The UTF-8 byte length of a text or JSON column (as its text)."""

    template = "OCTET_LENGTH((%(expressions)s)::text)"
    output_field = BigIntegerField()

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(
            compiler, connection, template="LENGTH(CAST(%(expressions)s AS BLOB))"
        )


def stored_size(*columns: str) -> Expression:
    """The stored bytes of ``columns`` (``content``, ``metadata``), from their
    ``<column>_bytes`` counts, or measured for rows without them."""
    total: Any = None
    for column in columns:
        size = Coalesce(F(f"{column}_bytes"), OctetLength(column))
        total = size if total is None else total + size
    return total


@dataclass(frozen=True)
class Admission:
    """The positions a page admits, in order, and whether rows follow them."""

    positions: list[tuple[int, int]]  # (position, stored size)
    more: bool

    @property
    def last(self) -> int | None:
        return self.positions[-1][0] if self.positions else None


def admit(sized: Sequence[tuple[int, int]], *, limit: int, budget: int) -> Admission:
    """The first of ``sized`` (``(position, size)``, up to ``limit + 1``) that fit
    ``budget`` bytes together, at most ``limit``; the first one always fits."""
    admitted: list[tuple[int, int]] = []
    total = 0
    for position, size in sized[:limit]:
        if admitted and total + size > budget:
            break
        admitted.append((position, size))
        total += size
    return Admission(admitted, more=len(sized) > len(admitted))


def load(
    rows: QuerySet[Any], fields: Sequence[str], admission: Admission
) -> Iterator[dict[str, Any]]:
    """The admitted rows of ``rows`` (already filtered as the sizes were), read
    lazily in chunks of about ``CHUNK_BYTES`` of content, one query each."""
    for chunk in load_chunks(rows, fields, admission):
        yield from chunk


def load_chunks(
    rows: QuerySet[Any], fields: Sequence[str], admission: Admission
) -> Iterator[list[dict[str, Any]]]:
    """As ``load``, a list per chunk (to read what goes with each chunk at once)."""
    for first, last in _chunks(admission.positions):
        yield list(
            rows.filter(position__gte=first, position__lte=last)
            .order_by("position")
            .values(*fields)
        )


def _chunks(positions: Sequence[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    first: int | None = None
    previous = 0
    total = 0
    for position, size in positions:
        if first is not None and total + size > CHUNK_BYTES:
            yield first, previous
            first, total = None, 0
        if first is None:
            first = position
        total += size
        previous = position
    if first is not None:
        yield first, previous
