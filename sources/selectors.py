"""Reads from the registry, always filtered by scope."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, QuerySet, Value
from django.db.models.functions import StrIndex

from powercontext.api.principals import Principal

from .exceptions import ScopeNotFound
from .models import Scope, ScopeExternalReference

SCOPE_QUERY_FIELDS = ("scope_id", "title", "summary", "external_reference_value")


def _scopes_with_references() -> QuerySet[Scope]:
    return Scope.objects.prefetch_related("context_refs", "external_refs")


def scope_get(*, scope_id: str) -> Scope:
    """The scope ``scope_id`` with its references; raises ``ScopeNotFound``."""
    scope = _scopes_with_references().filter(scope_id=scope_id).first()
    if scope is None:
        raise ScopeNotFound()
    return scope


def scope_list(
    *,
    principal: Principal,
    query: str | None,
    query_field: str | None,
    parent_scope_id: str | None,
    external_reference_kind: str | None,
    after_scope_id: str | None,
    limit: int,
) -> list[Scope]:
    """Up to ``limit + 1`` scopes visible to ``principal``, in scope id order.

    ``query`` is a case-sensitive substring match on ``query_field`` (``StrIndex``
    is case-sensitive on both PostgreSQL and SQLite, unlike ``contains`` on SQLite).
    """
    scopes = _scopes_with_references().order_by("scope_id")
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
    if after_scope_id is not None:
        scopes = scopes.filter(scope_id__gt=after_scope_id)
    return list(scopes[: limit + 1])


def _matching(scopes: QuerySet[Scope], query: str, query_field: str) -> QuerySet[Scope]:
    if query_field == "external_reference_value":
        matches = ScopeExternalReference.objects.annotate(
            hit=StrIndex("value", Value(query))
        ).filter(scope=OuterRef("pk"), hit__gt=0)
        return scopes.filter(Exists(matches))
    return scopes.annotate(hit=StrIndex(query_field, Value(query))).filter(hit__gt=0)
