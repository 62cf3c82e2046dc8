"""Reads of scopes: one scope with its references, lists of scopes, existence."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Exists, OuterRef, QuerySet, Value
from django.db.models.functions import StrIndex

from powercontext.pages import Page, Position, keyset_page
from powercontext.principals import Principal

from ..exceptions import ScopeNotFound
from ..models import Scope, ScopeContextReference, ScopeExternalReference


@dataclass(frozen=True)
class ScopeView:
    """A scope as the API describes it (its ScopeDescriptor's fields)."""

    scope_id: str
    title: str
    summary: str
    parent_scope_id: str | None
    version: int
    context_references: list[str] = field(default_factory=list)
    external_references: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def of(cls, scope: Scope) -> ScopeView:
        """The view of a model whose references are prefetched (or just written)."""
        return cls(
            scope_id=scope.scope_id,
            title=scope.title,
            summary=scope.summary,
            parent_scope_id=scope.parent_id,
            version=scope.version,
            context_references=[ref.referenced_id for ref in scope.context_refs.all()],
            external_references=[
                (ref.kind, ref.value) for ref in scope.external_refs.all()
            ],
        )


# The idempotency key a principal's default scope is created under (see
# ``default_scope_create``); ``create_scope`` refuses it, so only
# ``GET /v1/scopes/default`` creates that scope.
DEFAULT_SCOPE_KEY = "powercontext:default-scope"


def default_scope_id(*, principal: Principal) -> str | None:
    """The id of the default scope ``principal`` created, or None (one query)."""
    return (
        Scope.objects.filter(
            created_by=principal.name, idempotency_key=DEFAULT_SCOPE_KEY
        )
        .values_list("scope_id", flat=True)
        .first()
    )


_SCOPE = Scope._meta.db_table
_CONTEXT = ScopeContextReference._meta.db_table
_EXTERNAL = ScopeExternalReference._meta.db_table
# The scope row and both reference lists in one round trip: three SELECTs of the
# same five columns, tagged by their first one and ordered by it, then by ordinal.
_SCOPE_WITH_REFERENCES = f"""
SELECT 0, title, summary, parent_scope_id, version FROM {_SCOPE} WHERE scope_id = %s
UNION ALL
SELECT 1, referenced_id, NULL, NULL, ordinal FROM {_CONTEXT} WHERE scope_id = %s
UNION ALL
SELECT 2, kind, value, NULL, ordinal FROM {_EXTERNAL} WHERE scope_id = %s
ORDER BY 1, 5
"""


def scope_get(*, scope_id: str) -> ScopeView:
    """The scope ``scope_id`` with its references (one query); ScopeNotFound."""
    with connection.cursor() as cursor:
        cursor.execute(_SCOPE_WITH_REFERENCES, [scope_id] * 3)
        rows = cursor.fetchall()
    if not rows or rows[0][0] != 0:
        raise ScopeNotFound()
    _, title, summary, parent_scope_id, version = rows[0]
    return ScopeView(
        scope_id=scope_id,
        title=title,
        summary=summary,
        parent_scope_id=parent_scope_id,
        version=version,
        context_references=[row[1] for row in rows if row[0] == 1],
        external_references=[(row[1], row[2]) for row in rows if row[0] == 2],
    )


def scope_list(
    *,
    principal: Principal,
    query: str | None,
    query_field: str | None,
    parent_scope_id: str | None,
    external_reference_kind: str | None,
    position: Position | None,
    limit: int,
) -> Page[ScopeView]:
    """A page of the scopes visible to ``principal``, in scope id order (3 queries).

    ``query`` is a case-sensitive substring match on ``query_field`` (``StrIndex``
    is case-sensitive on both PostgreSQL and SQLite, unlike ``contains`` on SQLite).
    """
    scopes = Scope.objects.prefetch_related("context_refs", "external_refs")
    visible = principal.visible_scope_ids()
    if visible is not None:
        scopes = scopes.filter(scope_id__in=visible)
    if parent_scope_id is not None:
        scopes = scopes.filter(parent_id=parent_scope_id)
    if external_reference_kind is not None:
        scopes = scopes.filter(
            Exists(
                ScopeExternalReference.objects.filter(
                    scope=OuterRef("pk"), kind=external_reference_kind
                )
            )
        )
    if query is not None and query_field is not None:
        scopes = _matching(scopes, query, query_field)
    if position is not None:
        scopes = scopes.filter(scope_id__gt=position["after"])
    rows = [ScopeView.of(scope) for scope in scopes.order_by("scope_id")[: limit + 1]]
    return keyset_page(rows, limit, lambda view: {"after": view.scope_id})


def _matching(scopes: QuerySet[Scope], query: str, query_field: str) -> QuerySet[Scope]:
    if query_field == "external_reference_value":
        matches = ScopeExternalReference.objects.annotate(
            hit=StrIndex("value", Value(query))
        ).filter(scope=OuterRef("pk"), hit__gt=0)
        return scopes.filter(Exists(matches))
    return scopes.annotate(hit=StrIndex(query_field, Value(query))).filter(hit__gt=0)


def scope_require(*, scope_id: str) -> None:
    """Raise ``ScopeNotFound`` unless the scope exists (one indexed query)."""
    if not Scope.objects.filter(scope_id=scope_id).exists():
        raise ScopeNotFound()


def scope_ids_unknown(*, scope_ids: Iterable[str]) -> list[str]:
    """The ids among ``scope_ids`` that name no scope, in the order given.

    The ids must be storable text (the caller checks); one query.
    """
    wanted = list(dict.fromkeys(scope_ids))
    known = set(
        Scope.objects.filter(scope_id__in=wanted).values_list("scope_id", flat=True)
    )
    return [scope_id for scope_id in wanted if scope_id not in known]
