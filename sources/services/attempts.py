"""The capture-attempt log: append-only, and never the reason an answer changes."""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import connection, transaction

from sources.models import CaptureAttempt, CaptureOutcome

logger = logging.getLogger("powercontext.attempts")

_COLUMNS = (
    "scope_id, source_type, source_id, outcome, reason, value_digest, principal, "
    "request_id, at"
)
# Sent as one simple query (Django's psycopg cursors bind parameters client-side):
# PostgreSQL runs both statements as one transaction, so SET LOCAL applies to it.
_UNFLUSHED_INSERT = (
    "SET LOCAL synchronous_commit TO OFF; "
    f"INSERT INTO {CaptureAttempt._meta.db_table} ({_COLUMNS}) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


def attempt_record(
    *,
    scope_id: str,
    source_type: str,
    source_id: str,
    outcome: CaptureOutcome,
    reason: str | None,
    value_digest: str,
    principal: str,
    request_id: str,
    at: datetime,
    durable: bool = True,
) -> None:
    """Append one attempt in a short transaction of its own.

    Used for replays, conflicts and rejections once the outcome is decided
    (accepted attempts are written with the Source, in its transaction). Any
    failure is logged with the attempt's identity and swallowed: the caller's
    answer is already decided and must not turn into an error. With
    ``durable=False`` (inside a caller's transaction) the row is written in a
    savepoint, so a failure rolls back only the log row. On PostgreSQL the
    own-transaction commit does not wait for the WAL flush: a crash may lose the
    last few attempt rows, never a Source (docs/decisions/0003-attempt-log.md).
    """
    values = [
        scope_id,
        source_type,
        source_id,
        outcome.value,
        reason,
        value_digest,
        principal,
        request_id,
        at,
    ]
    try:
        if (
            durable
            and connection.vendor == "postgresql"
            and not connection.in_atomic_block
        ):
            # One round trip: the two statements run as one implicit transaction,
            # and the client does not wait for its WAL flush.
            with connection.cursor() as cursor:
                cursor.execute(_UNFLUSHED_INSERT, values)
            return
        with transaction.atomic(durable=durable):
            CaptureAttempt.objects.create(
                scope_id=scope_id,
                source_type=source_type,
                source_id=source_id,
                outcome=outcome,
                reason=reason,
                value_digest=value_digest,
                principal=principal,
                request_id=request_id,
                at=at,
            )
    except Exception:
        logger.exception(
            "could not record capture attempt %s %s/%s/%s",
            outcome,
            scope_id,
            source_type,
            source_id,
        )
