"""Admin building blocks: exact identity search, read-only audit, capped counts."""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.core.paginator import Paginator
from django.db.models import Q, QuerySet
from django.http import HttpRequest


class ExactSearchMixin:
    """Search by exact, byte-for-byte equality on ``exact_search_fields``.

    Django's ``=`` prefix means ``iexact`` (ILIKE on PostgreSQL); identities are
    case-sensitive and never trimmed, so the term is compared as typed.

    The list is filtered on the fields the term names rows by, found first with
    one ``EXISTS`` probe per field: a term is nearly always one kind of identity,
    and one equality walks its index in the list's order, where an ``OR`` of
    every field gathers and sorts all matches (a session's thousands of notes)
    before the first page (decision 0022). Each field needs an index.
    """

    exact_search_fields: tuple[str, ...] = ()

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Any], search_term: str
    ) -> tuple[QuerySet[Any], bool]:
        if not search_term:
            return queryset, False
        condition = Q()
        for field in self.exact_search_fields:
            if queryset.filter(**{field: search_term}).exists():
                condition |= Q(**{field: search_term})
        if not condition:
            return queryset.none(), False
        return queryset.filter(condition), False


class ReadOnlyAdminMixin:
    """Nothing is added, changed or deleted through the admin; no bulk actions."""

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        return {}

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class CappedCountPaginator(Paginator):
    """Counts at most ``CAP + 1`` rows, so a changelist never runs a full COUNT(*).

    Counting stops at the cap because a filtered count reads every matching row up
    to it: a thousand is a few milliseconds at any table size, ten thousand rows of
    a 5% filter was a fifth of a second at a million Sources (decision 0022).
    Past the cap the list shows ``CAP // per_page`` pages and says "more than CAP"
    (``admin/pagination.html``).
    """

    CAP = 1_000

    @cached_property
    def count(self) -> int:
        return self.object_list[: self.CAP + 1].count()  # type: ignore[attr-defined]

    @property
    def capped(self) -> bool:
        """Whether there are more rows than were counted."""
        return self.count > self.CAP
