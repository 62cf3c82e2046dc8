"""Scope creation, and each principal's default scope."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import IntegrityError, transaction
from django.utils import timezone

from powercontext.canonical import canonical_sha256
from powercontext.db.constraints import violates_constraint
from powercontext.exceptions import InvalidRequest
from powercontext.principals import Principal
from sources.exceptions import ScopeIdempotencyConflict, ScopeNotFound
from sources.identifiers import new_scope_id
from sources.models import (
    Scope,
    ScopeContextReference,
    ScopeExternalReference,
    SourceJournalHead,
)
from sources.selectors import DEFAULT_SCOPE_KEY, ScopeView, scope_get
from sources.signals import scope_created

# What the reference names the default scope it creates at first start.
DEFAULT_SCOPE_TITLE = "Default"
DEFAULT_SCOPE_SUMMARY = "Default context"


def scope_request_digest(
    *,
    title: str,
    summary: str,
    parent_scope_id: str | None,
    context_references: Sequence[str],
    external_references: Sequence[tuple[str, str]],
) -> str:
    """The digest that tells a replayed creation from a conflicting one (also
    written by the importer, so a replay of an imported scope's creation replays)."""
    return canonical_sha256(
        {
            "title": title,
            "summary": summary,
            "parent_scope_id": parent_scope_id,
            "context_references": list(context_references),
            "external_references": [list(ref) for ref in external_references],
        }
    )


def default_scope_create(*, principal: Principal, request_id: str) -> ScopeView:
    """Create ``principal``'s default scope, or return it if it exists.

    The default scope is an ordinary scope titled ``Default``, created by the
    principal under the reserved idempotency key ``DEFAULT_SCOPE_KEY``, so two
    concurrent first requests get the same scope (``scope_create``'s insert-first
    arbitration) and its creator holds ``admin`` on it.
    """
    scope, _ = _scope_insert(
        principal=principal,
        title=DEFAULT_SCOPE_TITLE,
        summary=DEFAULT_SCOPE_SUMMARY,
        parent_scope_id=None,
        context_references=(),
        external_references=(),
        idempotency_key=DEFAULT_SCOPE_KEY,
        request_id=request_id,
    )
    return scope


def scope_create(
    *,
    principal: Principal,
    title: str,
    summary: str,
    parent_scope_id: str | None,
    context_references: Sequence[str],
    external_references: Sequence[tuple[str, str]],
    idempotency_key: str,
    request_id: str,
) -> tuple[ScopeView, bool]:
    """Create a scope, or return the one this principal created with the same key.

    Returns ``(scope, created)``. The same ``idempotency_key`` with the same
    parameters returns the original scope; with different parameters it raises
    ``ScopeIdempotencyConflict``. A parent or context reference naming no scope
    raises ``ScopeNotFound``; the key ``DEFAULT_SCOPE_KEY`` (the default scope's)
    raises ``InvalidRequest``. The scope, its references, its journal head and the
    creator's admin grant (to its principal: every token of it) are written in
    one transaction; a concurrent duplicate is arbitrated by the unique
    constraint (insert first, then classify). ``scope_created`` is sent in that
    transaction (the access app's receiver writes the creator's grant).
    """
    if idempotency_key == DEFAULT_SCOPE_KEY:
        raise InvalidRequest.for_field(
            "idempotency_key",
            "reserved",
            "This idempotency key is reserved for the default scope "
            "(GET /v1/scopes/default).",
        )
    return _scope_insert(
        principal=principal,
        title=title,
        summary=summary,
        parent_scope_id=parent_scope_id,
        context_references=context_references,
        external_references=external_references,
        idempotency_key=idempotency_key,
        request_id=request_id,
    )


def _scope_insert(
    *,
    principal: Principal,
    title: str,
    summary: str,
    parent_scope_id: str | None,
    context_references: Sequence[str],
    external_references: Sequence[tuple[str, str]],
    idempotency_key: str,
    request_id: str,
) -> tuple[ScopeView, bool]:
    digest = scope_request_digest(
        title=title,
        summary=summary,
        parent_scope_id=parent_scope_id,
        context_references=context_references,
        external_references=external_references,
    )
    referenced = set(context_references) | (
        {parent_scope_id} if parent_scope_id else set()
    )
    with transaction.atomic(durable=True):
        found = set(
            Scope.objects.filter(scope_id__in=referenced).values_list(
                "scope_id", flat=True
            )
        )
        if missing := sorted(referenced - found):
            raise ScopeNotFound(details={"scope_ids": missing})
        try:
            with transaction.atomic():
                scope = Scope.objects.create(
                    scope_id=new_scope_id(),
                    title=title,
                    summary=summary,
                    parent_id=parent_scope_id,
                    idempotency_key=idempotency_key,
                    request_digest=digest,
                    created_by=principal.name,
                    created_at=timezone.now(),
                    request_id=request_id,
                )
        except IntegrityError as exc:
            if not violates_constraint(exc, Scope, "sources_scope_idempotency_uniq"):
                raise
            existing = Scope.objects.get(
                created_by=principal.name, idempotency_key=idempotency_key
            )
            if existing.request_digest != digest:
                raise ScopeIdempotencyConflict() from None
            return scope_get(scope_id=existing.scope_id), False
        ScopeContextReference.objects.bulk_create(
            ScopeContextReference(scope=scope, ordinal=index, referenced_id=target)
            for index, target in enumerate(context_references)
        )
        ScopeExternalReference.objects.bulk_create(
            ScopeExternalReference(scope=scope, ordinal=index, kind=kind, value=value)
            for index, (kind, value) in enumerate(external_references)
        )
        SourceJournalHead.objects.create(scope=scope)
        scope_created.send(
            sender=Scope,
            scope_id=scope.scope_id,
            principal=principal,
            request_id=request_id,
        )
    view = ScopeView(
        scope_id=scope.scope_id,
        title=title,
        summary=summary,
        parent_scope_id=parent_scope_id,
        version=scope.version,
        context_references=list(context_references),
        external_references=list(external_references),
    )
    return view, True
