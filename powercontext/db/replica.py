"""Reads from a PostgreSQL streaming replica (docs/operations.md, "Read replicas").

With ``DATABASE_REPLICA_URL`` set, the reads that tolerate replication lag - lists,
audit, attempts and the generation window - go to the ``replica`` database; every
other read and every write goes to the primary (``default``): captures and their
replay checks, single-Source reads, envelopes (whose ``ETag`` feeds ``If-Match``),
handoffs, authentication and grants. A view opts in with ``@reads_from_replica``;
the choice holds for the rest of its request (a streamed answer is read after the
view returns) and is cleared when the next request starts.

The replica is used only while it is close enough: its lag is probed at most once a
second per process, and when it lags more than ``POWERCONTEXT_REPLICA_MAX_LAG``
seconds or cannot be reached, reads go to the primary. A walk's later pages stay
complete: a page whose cursor fixes a high watermark the replica has not replayed
yet is read from the primary (``stay_on_replica_if``).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar

from django.conf import settings
from django.db import DatabaseError, connections

REPLICA = "replica"
PROBE_INTERVAL = 1.0  # seconds between two lag probes in one process
RETRY_INTERVAL = 5.0  # after the replica could not be reached

logger = logging.getLogger("powercontext.replica")
_reads: ContextVar[str | None] = ContextVar("powercontext_reads", default=None)
Handler = TypeVar("Handler", bound=Callable[..., Any])

# Replayed everything received: no lag. Otherwise the age of the last replayed
# transaction (it grows while the replica falls behind).
_LAG_SQL = """
SELECT CASE
    WHEN NOT pg_is_in_recovery() THEN 0
    WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
    ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0)
END
"""


class ReplicaRouter:
    """Django's database router: the replica for reads a view opted in, else the
    primary; migrations never run on the replica."""

    def db_for_read(self, model: Any, **hints: Any) -> str | None:
        return _reads.get()

    def db_for_write(self, model: Any, **hints: Any) -> str | None:
        return None

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool | None:
        return True

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool | None:
        return False if db == REPLICA else None


def configured() -> bool:
    return REPLICA in settings.DATABASES


def request_started() -> None:
    """Every request reads from the primary until its view opts in."""
    _reads.set(None)


def reads_from_replica(handler: Handler) -> Handler:
    """Send the rest of this request's reads to the replica while it is usable.

    Applied to a view's handler, so authentication and grants (run before it) read
    the primary.
    """

    @functools.wraps(handler)
    def reading(*args: Any, **kwargs: Any) -> Any:
        if configured() and _probe.usable():
            _reads.set(REPLICA)
        return handler(*args, **kwargs)

    return reading  # type: ignore[return-value]


def stay_on_replica_if(caught_up: Callable[[], bool]) -> None:
    """On a request reading the replica, read the primary instead from here on
    unless ``caught_up()`` - run on the replica - holds."""
    if _reads.get() != REPLICA:
        return
    try:
        if caught_up():
            return
    except DatabaseError:
        pass
    _reads.set(None)


class _LagProbe:
    """Whether the replica may serve reads, decided at most once per interval."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next = 0.0
        self._usable = False
        self._state = "unknown"

    def usable(self) -> bool:
        """The last decision; one thread re-measures when it is due, while the
        others go on with the last decision rather than wait for it."""
        if time.monotonic() >= self._next and self._lock.acquire(blocking=False):
            try:
                self._usable = self._measure()
                interval = (
                    PROBE_INTERVAL if self._state != "unavailable" else RETRY_INTERVAL
                )
                self._next = time.monotonic() + interval
            finally:
                self._lock.release()
        return self._usable

    def _measure(self) -> bool:
        try:
            with connections[REPLICA].cursor() as cursor:
                cursor.execute(_LAG_SQL)
                lag = float(cursor.fetchone()[0])
        except DatabaseError as error:
            self._report("unavailable", f"the replica cannot be read ({error})")
            connections[REPLICA].close()
            return False
        if lag > settings.POWERCONTEXT_REPLICA_MAX_LAG:
            self._report("lagging", f"the replica lags {lag:.1f} s")
            return False
        self._report("ok", "the replica serves list and audit reads again")
        return True

    def _report(self, state: str, message: str) -> None:
        if state != self._state:
            level = logging.INFO if state == "ok" else logging.WARNING
            suffix = "" if state == "ok" else "; reads go to the primary"
            logger.log(level, "%s%s", message, suffix)
            self._state = state


_probe = _LagProbe()
