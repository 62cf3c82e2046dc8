"""The capture-attempt log: append-only, and never the reason an answer changes."""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import connection, transaction

from sources.models import CaptureAttempt, CaptureOutcome

logger = logging.getLogger("powercontext.attempts")


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
    try:
        with transaction.atomic(durable=durable):
            if durable and connection.vendor == "postgresql":
                # The log is best-effort by contract: don't make the client wait for
                # its WAL flush. (Accepted attempts commit durably with their Source.)
                with connection.cursor() as cursor:
                    cursor.execute("SET LOCAL synchronous_commit TO OFF")
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
