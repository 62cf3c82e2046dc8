"""The registry's lifecycle writes: session closures and tombstones.

Both run inside the transaction of the lifecycle service that decided them
(``lifecycle.services``), which also locks what must not change meanwhile.

A tombstone is the one in-place change a Source row may ever undergo
(docs/api.md): ``content`` and ``metadata`` become NULL, their sizes 0,
and ``purged_at`` / ``purge_run`` are set, once. Identity, position, both
digests and the note fields stay, so an exact replay still finds its original
receipt and a different value is still a conflict. The database enforces that
this is the only change (``powercontext.db.guards.tombstone_guard``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.db import IntegrityError, connection, transaction

from powercontext.db.constraints import violates_constraint
from powercontext.principals import Principal

from ..models import ContentSource, SessionClosure

_SOURCE = ContentSource._meta.db_table
_CLOSURE_CONSTRAINT = "sources_closure_session_uniq"


def session_closure_record(
    *,
    scope_id: str,
    session_id: str,
    principal: Principal,
    request_id: str,
    now: datetime,
) -> tuple[SessionClosure, bool]:
    """Record that the session ended, or return the record already there.

    Returns ``(closure, created)``; insert first, then classify, so concurrent
    closes make one record. Must run inside the caller's transaction, after it
    checked the scope exists.
    """
    assert connection.in_atomic_block, "the calling service owns the transaction"
    try:
        with transaction.atomic():
            closure = SessionClosure.objects.create(
                scope_id=scope_id,
                session_id=session_id,
                closed_at=now,
                closed_by=principal.name,
                request_id=request_id,
            )
    except IntegrityError as exc:
        if not violates_constraint(exc, SessionClosure, _CLOSURE_CONSTRAINT):
            raise
        return SessionClosure.objects.get(
            scope_id=scope_id, session_id=session_id
        ), False
    return closure, True


def sources_tombstone(*, ids: Sequence[int], run_id: str, now: datetime) -> int:
    """Turn the Sources ``ids`` that are not tombstones yet into tombstones of
    ``run_id``; returns how many changed. Runs in the caller's transaction."""
    assert connection.in_atomic_block, "the calling service owns the transaction"
    if not ids:
        return 0
    marks = ", ".join(["%s"] * len(ids))
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_SOURCE} SET content = NULL, metadata = NULL, "  # noqa: S608
            "content_bytes = 0, metadata_bytes = 0, purged_at = %s, purge_run = %s "
            f"WHERE id IN ({marks}) AND purged_at IS NULL",
            [now, run_id, *ids],
        )
        return cursor.rowcount
