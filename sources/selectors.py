"""Reads from the registry, always filtered by scope."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Value, Window
from django.db.models.functions import RowNumber, StrIndex

from powercontext.api.principals import Principal

from .exceptions import ScopeNotFound, SourceNotFound
from .models import (
    CaptureAttempt,
    ContentSource,
    Scope,
    ScopeExternalReference,
    SourceJournalHead,
)

RECORD_FIELDS = (
    "scope_id",
    "source_type",
    "source_id",
    "content",
    "position",
    "content_digest",
)
AUDIT_FIELDS = (
    *RECORD_FIELDS,
    "metadata",
    "is_working_note",
    "session_id",
    "note_kind",
    "expires_at",
    "created_at",
    "created_by",
    "request_id",
)
AUDIT_RECENT_ATTEMPTS = 20

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


# --- Sources ------------------------------------------------------------------


@dataclass(frozen=True)
class SourceIdentity:
    """What capture needs to classify an existing identity."""

    position: int
    value_digest: str


def scope_ids_unknown(*, scope_ids: Iterable[str]) -> list[str]:
    """The ids among ``scope_ids`` that name no scope, in the order given.

    The ids must be storable text (the caller checks); one query.
    """
    wanted = list(dict.fromkeys(scope_ids))
    known = set(
        Scope.objects.filter(scope_id__in=wanted).values_list("scope_id", flat=True)
    )
    return [scope_id for scope_id in wanted if scope_id not in known]


def scope_require(*, scope_id: str) -> None:
    """Raise ``ScopeNotFound`` unless the scope exists."""
    if not Scope.objects.filter(scope_id=scope_id).exists():
        raise ScopeNotFound()


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
    *, scope_id: str, after_position: int, high_watermark: int, limit: int
) -> list[dict[str, Any]]:
    """Up to ``limit + 1`` Sources after ``after_position``, up to the watermark.

    Working notes are included, expired ones too (the reference's list does so).
    """
    return list(
        ContentSource.objects.filter(
            scope_id=scope_id,
            position__gt=after_position,
            position__lte=high_watermark,
        )
        .order_by("position")
        .values(*RECORD_FIELDS)[: limit + 1]
    )


def source_window(
    *, scope_id: str, after_position: int, high_watermark: int, limit: int
) -> list[dict[str, Any]]:
    """Up to ``limit`` non-note Sources after ``after_position``, to the watermark."""
    return list(
        ContentSource.objects.filter(
            scope_id=scope_id,
            is_working_note=False,
            position__gt=after_position,
            position__lte=high_watermark,
        )
        .order_by("position")
        .values(*RECORD_FIELDS)[:limit]
    )


# --- Audit --------------------------------------------------------------------


@dataclass(frozen=True)
class AuditFilters:
    working_note: bool | None = None
    session_id: str | None = None
    note_kind: str | None = None
    state: str | None = None


def state_of(row: dict[str, Any], now: datetime) -> str:
    """``expired`` for a note whose ``expires_at`` <= ``now``, else ``active``."""
    expires_at = row["expires_at"]
    if row["is_working_note"] and expires_at is not None and expires_at <= now:
        return "expired"
    return "active"


def _state_condition(state: str, now: datetime) -> Q:
    expired = Q(is_working_note=True, expires_at__lte=now)
    return expired if state == "expired" else ~expired


def audit_page(
    *,
    scope_id: str,
    filters: AuditFilters,
    after_position: int,
    limit: int,
    now: datetime,
) -> list[dict[str, Any]]:
    """Up to ``limit + 1`` audit rows after ``after_position``, with their attempts.

    Three queries whatever the page size: the rows, the last attempts of every
    identity on the page (a window function), and the attempt totals.
    """
    rows = ContentSource.objects.filter(scope_id=scope_id, position__gt=after_position)
    if filters.working_note is not None:
        rows = rows.filter(is_working_note=filters.working_note)
    if filters.session_id is not None:
        rows = rows.filter(is_working_note=True, session_id=filters.session_id)
    if filters.note_kind is not None:
        rows = rows.filter(is_working_note=True, note_kind=filters.note_kind)
    if filters.state is not None:
        rows = rows.filter(_state_condition(filters.state, now))
    page = list(rows.order_by("position").values(*AUDIT_FIELDS)[: limit + 1])
    _attach_attempts(scope_id, page)
    return page


def audit_get(*, scope_id: str, source_type: str, source_id: str) -> dict[str, Any]:
    """One audit row with attempts; raises ``SourceNotFound`` or ``ScopeNotFound``."""
    row = (
        ContentSource.objects.filter(
            scope_id=scope_id, source_type=source_type, source_id=source_id
        )
        .values(*AUDIT_FIELDS)
        .first()
    )
    if row is None:
        scope_require(scope_id=scope_id)
        raise SourceNotFound()
    _attach_attempts(scope_id, [row])
    return row


def _attach_attempts(scope_id: str, rows: list[dict[str, Any]]) -> None:
    """Set ``attempts`` (last 20, oldest first) and ``attempts_total`` on each row."""
    if not rows:
        return
    identities = [row["source_id"] for row in rows]
    attempts = CaptureAttempt.objects.filter(
        scope_id=scope_id, source_type="content", source_id__in=identities
    )
    recent = (
        attempts.annotate(
            recency=Window(
                RowNumber(), partition_by=[F("source_id")], order_by=F("id").desc()
            )
        )
        .filter(recency__lte=AUDIT_RECENT_ATTEMPTS)
        .order_by("source_id", "id")
        .values("source_id", "outcome", "reason", "at", "principal", "request_id")
    )
    totals = dict(
        attempts.order_by()
        .values("source_id")
        .annotate(total=Count("id"))
        .values_list("source_id", "total")
    )
    by_identity: dict[str, list[dict[str, Any]]] = {}
    for attempt in recent:
        by_identity.setdefault(attempt.pop("source_id"), []).append(attempt)
    for row in rows:
        row["attempts"] = by_identity.get(row["source_id"], [])
        row["attempts_total"] = totals.get(row["source_id"], 0)


def attempt_page(
    *, scope_id: str, source_type: str, source_id: str, after_id: int, limit: int
) -> list[dict[str, Any]]:
    """Up to ``limit + 1`` attempts of one identity, oldest first.

    An identity with no attempts and no Source raises ``SourceNotFound`` (or
    ``ScopeNotFound``): the log answers also for identities that never became a
    Source, such as a rejected new note.
    """
    page = list(
        CaptureAttempt.objects.filter(
            scope_id=scope_id,
            source_type=source_type,
            source_id=source_id,
            id__gt=after_id,
        )
        .order_by("id")
        .values("id", "outcome", "reason", "at", "principal", "request_id")[: limit + 1]
    )
    if not page and after_id == 0:
        source_get(scope_id=scope_id, source_type=source_type, source_id=source_id)
    return page
