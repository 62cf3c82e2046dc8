"""Reads of a scope's Memory records: the list and the text search."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db.models import Case, IntegerField, Q, QuerySet, Value, When

from powercontext.pages import Page, Position, keyset_page

from ..models import MemoryRecord
from .scopes import scope_require

# At most this many distinct words of a query are matched (the rest are ignored),
# so one query costs a bounded number of LIKE tests per record.
SEARCH_WORDS_MAX = 32
# The constant of reciprocal-rank scores: the reference's single text channel
# scores its first hit 1/61.
RANK_CONSTANT = 60
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class MemoryHit:
    record: MemoryRecord
    score: float


def _records(*, scope_id: str, tags: list[str] | None) -> QuerySet[MemoryRecord]:
    records = MemoryRecord.objects.filter(scope_id=scope_id)
    # Records carry no tags here (no operation sets one): a tag filter, which
    # needs at least one tag, matches none of them.
    return records.none() if tags else records


def memory_page(
    *,
    scope_id: str,
    position: Position | None,
    limit: int,
    tags: list[str] | None = None,
) -> Page[MemoryRecord]:
    """A page of the scope's Memory records in ``artifact_id`` order (the
    reference's order). Raises ``ScopeNotFound``. Two queries."""
    scope_require(scope_id=scope_id)
    records = _records(scope_id=scope_id, tags=tags)
    if position is not None:
        records = records.filter(artifact_id__gt=position["after"])
    rows = list(records.order_by("artifact_id")[: limit + 1])
    return keyset_page(rows, limit, lambda row: {"after": row.artifact_id})


def search_words(query: str) -> list[str]:
    """The distinct words of ``query``, case-folded, first ``SEARCH_WORDS_MAX``."""
    words = dict.fromkeys(word.casefold() for word in _WORD.findall(query))
    return list(words)[:SEARCH_WORDS_MAX]


def memory_search(
    *, scope_id: str, query: str, limit: int, tags: list[str] | None = None
) -> list[MemoryHit]:
    """The scope's records holding any word of ``query`` (case-insensitive).

    Ranked by how many distinct query words a record holds, then by
    ``artifact_id``; the hit at rank r (from 1) scores ``1 / (60 + r)``. A query
    without a word matches nothing. Raises ``ScopeNotFound``. Two queries.
    """
    scope_require(scope_id=scope_id)
    words = search_words(query)
    if not words:
        return []
    holds = [Q(text__icontains=word) for word in words]
    one_if = [
        Case(When(hold, then=Value(1)), default=Value(0), output_field=IntegerField())
        for hold in holds
    ]
    matched = sum(one_if, start=Value(0, output_field=IntegerField()))
    any_word = Q()
    for hold in holds:
        any_word |= hold
    rows = (
        _records(scope_id=scope_id, tags=tags)
        .filter(any_word)
        .annotate(matched=matched)
        .order_by("-matched", "artifact_id")[:limit]
    )
    return [
        MemoryHit(row, 1 / (RANK_CONSTANT + rank)) for rank, row in enumerate(rows, 1)
    ]
