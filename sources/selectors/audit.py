"""The audit view of the registry: Sources with every field, and their attempts."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.db.models import Count, F, Window
from django.db.models.functions import RowNumber

from powercontext.db.json import JSONText
from powercontext.limits import max_response_bytes
from powercontext.pages import Page, Position, keyset_page

from ..availability import availability_condition, session_closed_at
from ..exceptions import SourceNotFound
from ..filters import AuditFilters
from ..models import CaptureAttempt, ContentSource
from .budget import admit, load_chunks, stored_size
from .records import RECORD_FIELDS, source_get
from .scopes import scope_require

AUDIT_FIELDS = (
    *RECORD_FIELDS,
    "metadata_text",
    "is_working_note",
    "session_id",
    "note_kind",
    "expires_at",
    "created_at",
    "created_by",
    "request_id",
    "purged_at",
    "purge_run",
    "closed_at",
)
ATTEMPT_FIELDS = ("outcome", "reason", "at", "principal", "request_id")
AUDIT_RECENT_ATTEMPTS = 20


def audit_page(
    *,
    scope_id: str,
    filters: AuditFilters,
    position: Position | None,
    start_after: int,
    limit: int,
    now: datetime,
) -> Page[dict[str, Any]]:
    """A page of audit rows with their attempts, in journal order, read lazily.

    Starts after ``position`` (a cursor's) or, on the first page, after position
    ``start_after``; stops early at the response budget (content and metadata
    count). Queries: the sizes, then per chunk of rows the rows, the last
    attempts of every identity in it (a window function) and the attempt
    totals; one more only for an empty page, to tell a missing scope
    (``ScopeNotFound``).
    """
    after = start_after if position is None else position["after"]
    rows = ContentSource.objects.filter(scope_id=scope_id, position__gt=after)
    if filters.working_note is not None:
        rows = rows.filter(is_working_note=filters.working_note)
    if filters.session_id is not None:
        rows = rows.filter(is_working_note=True, session_id=filters.session_id)
    if filters.note_kind is not None:
        rows = rows.filter(is_working_note=True, note_kind=filters.note_kind)
    if filters.state is not None:
        rows = rows.filter(availability_condition(filters.state, now))
    sized = list(
        rows.order_by("position")
        .annotate(size=stored_size("content", "metadata"))
        .values_list("position", "size")[: limit + 1]
    )
    if not sized:
        scope_require(scope_id=scope_id)
        return Page([], None)
    admission = admit(sized, limit=limit, budget=max_response_bytes())
    following = {"after": admission.last} if admission.more else None
    chunks = load_chunks(_audited(rows), AUDIT_FIELDS, admission)
    return Page(_with_attempts(scope_id, chunks), following)


def audit_get(*, scope_id: str, source_type: str, source_id: str) -> dict[str, Any]:
    """One audit row with attempts; raises ``SourceNotFound`` or ``ScopeNotFound``."""
    row = (
        _audited(ContentSource.objects)
        .filter(scope_id=scope_id, source_type=source_type, source_id=source_id)
        .values(*AUDIT_FIELDS)
        .first()
    )
    if row is None:
        scope_require(scope_id=scope_id)
        raise SourceNotFound()
    _attach_attempts(scope_id, [row])
    return row


def _audited(rows: Any) -> Any:
    """``rows`` with their metadata as stored text (answers write it as it is) and
    their session's close instant (for their ``state``)."""
    return rows.annotate(
        metadata_text=JSONText("metadata"), closed_at=session_closed_at()
    )


def _with_attempts(
    scope_id: str, chunks: Iterator[list[dict[str, Any]]]
) -> Iterator[dict[str, Any]]:
    for chunk in chunks:
        _attach_attempts(scope_id, chunk)
        yield from chunk


def _attach_attempts(scope_id: str, rows: Any) -> None:
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
        .values("source_id", *ATTEMPT_FIELDS)
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
    *,
    scope_id: str,
    source_type: str,
    source_id: str,
    position: Position | None,
    limit: int,
) -> Page[dict[str, Any]]:
    """A page of one identity's attempts, oldest first.

    An identity with no attempts and no Source raises ``SourceNotFound`` (or
    ``ScopeNotFound``): the log answers also for identities that never became a
    Source, such as a rejected new note.
    """
    after = 0 if position is None else position["after"]
    rows = list(
        CaptureAttempt.objects.filter(
            scope_id=scope_id,
            source_type=source_type,
            source_id=source_id,
            id__gt=after,
        )
        .order_by("id")
        .values("id", *ATTEMPT_FIELDS)[: limit + 1]
    )
    if not rows and position is None:
        source_get(scope_id=scope_id, source_type=source_type, source_id=source_id)
    return keyset_page(rows, limit, lambda row: {"after": row["id"]})
