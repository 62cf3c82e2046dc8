"""The capture-attempt log: append-only, and never the reason an answer changes.

An ``accepted`` attempt is written by the capture statement itself, in the
Source's transaction. Every other outcome (replay, conflict, rejection) is
collected in the request's ``AttemptLog`` and written when the log closes - after
the transaction of the service that decided it, committed or rolled back, each row
in a short transaction of its own (api.md 5.3). So a capture inside a larger
transaction (the envelope's notes bridge) keeps the record of a conflict or a
rejection that rolled that transaction back (docs/decisions/0006).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import astuple

from django.db import connection, transaction

from sources.models import CaptureAttempt, CaptureOutcome
from sources.rows import ATTEMPT_FIELDS, AttemptRow

logger = logging.getLogger("powercontext.attempts")


# Sent as one simple query (Django's psycopg cursors bind parameters client-side):
# PostgreSQL runs both statements as one transaction, so SET LOCAL applies to it.
_UNFLUSHED_INSERT = (
    "SET LOCAL synchronous_commit TO OFF; "
    f"INSERT INTO {CaptureAttempt._meta.db_table} ({', '.join(ATTEMPT_FIELDS)}) "
    f"VALUES ({', '.join(['%s'] * len(ATTEMPT_FIELDS))})"
)


class AttemptLog:
    """The attempts a request decided, written when ``attempt_log()`` closes."""

    def __init__(self) -> None:
        self._pending: list[AttemptRow] = []

    def add(self, row: AttemptRow) -> None:
        self._pending.append(row)

    def write(self) -> None:
        pending, self._pending = self._pending, []
        for row in pending:
            attempt_record(row)


@contextmanager
def attempt_log() -> Iterator[AttemptLog]:
    """An ``AttemptLog`` written on exit, whether the block raised or not.

    Enter it before the service's transaction so that it closes after it.
    """
    log = AttemptLog()
    try:
        yield log
    finally:
        log.write()


def attempt_record(row: AttemptRow) -> None:
    """Append one attempt in a short transaction of its own.

    Any failure is logged with the attempt's identity and swallowed: the caller's
    answer is already decided and must not turn into an error. On PostgreSQL the
    commit does not wait for the WAL flush: a crash may lose the last few attempt
    rows, never a Source (docs/decisions/0003-attempt-log.md).
    """
    try:
        if connection.vendor == "postgresql" and not connection.in_atomic_block:
            # One round trip: the two statements run as one implicit transaction,
            # and the client does not wait for its WAL flush.
            with connection.cursor() as cursor:
                cursor.execute(_UNFLUSHED_INSERT, astuple(row))
            return
        with transaction.atomic(durable=True):
            CaptureAttempt.objects.create(
                **{**vars(row), "outcome": CaptureOutcome(row.outcome)}
            )
    except Exception:
        logger.exception(
            "could not record capture attempt %s %s/%s/%s request_id=%s",
            row.outcome,
            row.scope_id,
            row.source_type,
            row.source_id,
            row.request_id,
        )
