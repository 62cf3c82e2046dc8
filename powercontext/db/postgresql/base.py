"""Django's PostgreSQL backend: connections checked before reuse, waited for on a
restart, and prepared statements for the hot paths.

By default each server thread keeps its connection across requests (Django's
persistent connections with ``CONN_HEALTH_CHECKS``): a request takes no
connection out of a pool and gives none back, about 40 us of CPU less per request
than psycopg's pool (decision 0045). Django checks the connection before a request
reuses it (``is_usable`` below). A database restart breaks it; the request then
opens a new one, and while the database refuses connections (down, starting up)
the new connection is tried again for up to the entry's ``CONNECT_WAIT`` seconds
(``POWERCONTEXT_DB_CONNECT_WAIT``), as a request waits for a pooled connection.

With the pool (``POWERCONTEXT_DB_POOL=true``): a restart breaks every idle
connection in a worker's pool at once, and the pool only notices when it hands one
out: without a check, each of them fails a request although the database is back.
psycopg's own checkout check (Django's ``CONN_HEALTH_CHECKS``) sleeps 1 s, 2 s, 4 s
... after each broken connection before it tries the next, so a lone request
meeting four of them outwaits the pool timeout and fails all the same. Here a
broken connection is discarded, the whole pool is swept at once
(``ConnectionPool.check()`` replaces every broken idle connection) and a
connection is taken again, without sleeping: the first request after a restart
waits only for one new connection.

Either check costs nothing on a healthy connection: an idle connection has nothing
to read, while one the server closed (restart, crash, termination) has an EOF or a
termination notice waiting on its socket. Only a connection with something to read
gets the round-trip check that decides.

``prepared_cursor()`` gives the hot paths (authentication, the capture statement)
a cursor with server-side binding. Django's own cursors bind parameters on the
client, so PostgreSQL parses and plans every statement again; through this cursor
psycopg prepares a statement once it has run ``prepare_threshold`` (5) times on a
connection, and PostgreSQL reuses its plan from then on. Measured with pgbench on
the capture statement: 1088-1242 transactions per second unprepared, 1783-1811
prepared. ``POWERCONTEXT_DB_DISABLE_PREPARE`` (PgBouncer in transaction mode)
sets ``prepare_threshold`` to None, which turns preparing off here too.
"""

from __future__ import annotations

import logging
import select
import time
from typing import Any

import psycopg
from django.db.backends.postgresql import base, operations
from psycopg.pq import TransactionStatus
from psycopg_pool import ConnectionPool

from powercontext import metrics

# The DATABASES entry's key for how long a new persistent connection waits for the
# database, in seconds (powercontext/settings/databases.py sets it).
CONNECT_WAIT = "CONNECT_WAIT"

logger = logging.getLogger(__name__)

# Between two attempts: 50 ms, doubling up to half a second.
FIRST_PAUSE = 0.05
LONGEST_PAUSE = 0.5


def _may_be_broken(connection: psycopg.Connection[Any]) -> bool:
    """Whether the idle ``connection`` has data (or EOF) waiting on its socket."""
    if connection.closed:
        return True
    try:
        readable, _, _ = select.select([connection.fileno()], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return True
    return bool(readable)


class DatabaseOperations(operations.DatabaseOperations):
    def sql_flush(
        self,
        style: Any,
        tables: Any,
        *,
        reset_sequences: bool = False,
        allow_cascade: bool = False,
    ) -> list[str]:
        """Django's flush, run past the TRUNCATE guards of the append-only tables.

        ``session_replication_role = replica`` skips ordinary triggers for the
        flush's own transaction; only a superuser may set it, so emptying the
        registry stays a deliberate act (``powercontext.db.guards``).
        """
        statements = super().sql_flush(
            style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
        )
        if not statements:
            return statements
        return ["SET LOCAL session_replication_role = replica", *statements]

    def last_executed_query(self, cursor: Any, sql: str, params: Any) -> str:
        """The statement as sent, also for a prepared cursor's (for query logs).

        Django reads it back from a client-side-binding cursor; a prepared
        statement leaves nothing to read, so it is composed from ``sql`` and
        ``params`` the way Django does with server-side binding on.
        """
        if isinstance(cursor, psycopg.ClientCursor):
            return super().last_executed_query(cursor, sql, params)
        try:
            return self.compose_sql(sql, params)
        except psycopg.errors.DataError:
            return sql


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations

    def prepared_cursor(self) -> Any:
        """A cursor whose repeated statements psycopg prepares (server-side binding)."""
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            cursor = base.ServerBindingCursor(self.connection)  # type: ignore[attr-defined]
        # What Django's own ``cursor()`` does with a new cursor: the query log
        # wrapper under DEBUG (or a test's query counting), else the plain one.
        self.validate_thread_sharing()
        if self.queries_logged:
            return self.make_debug_cursor(cursor)
        return self.make_cursor(cursor)

    def is_usable(self) -> bool:
        """Django's round-trip check, made only when the socket says it may fail.

        With persistent connections and ``CONN_HEALTH_CHECKS`` Django asks this at
        each request's first query; an idle healthy connection has nothing to
        read, so it needs no ``SELECT 1``.
        """
        if self.connection is None:
            return False
        idle = self.connection.info.transaction_status == TransactionStatus.IDLE
        if idle and not _may_be_broken(self.connection):
            return True
        return bool(super().is_usable())

    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        pool = self.pool  # type: ignore[attr-defined]  # not in django-stubs
        if pool is None:
            return self.connection_waiting(conn_params)
        connection = super().get_new_connection(conn_params)
        if not _may_be_broken(connection):
            return connection
        try:
            ConnectionPool.check_connection(connection)
        except psycopg.Error:
            pool.putconn(connection)  # broken: the pool discards and replaces it
            pool.check()  # the same restart broke its idle siblings
            connection = super().get_new_connection(conn_params)
        return connection

    def connection_waiting(self, conn_params: dict[str, Any]) -> Any:
        """A new connection, tried again while the database refuses connections.

        A database that is restarting refuses connections (or says it is starting
        up) for a few seconds; a request that needs one then waits for it, up to
        the entry's ``CONNECT_WAIT`` seconds, as it would wait for a pooled
        connection, instead of failing at once. libpq gives a failed connection no
        SQLSTATE, so every failure is tried again, as the pool does: a wrong
        password costs each request the whole wait, and the log says why.
        """
        deadline = time.monotonic() + self.settings_dict.get(CONNECT_WAIT, 0.0)
        pause = FIRST_PAUSE
        while True:
            try:
                return super().get_new_connection(conn_params)
            except psycopg.OperationalError as exc:
                metrics.db_connect_failed()
                left = deadline - time.monotonic()
                if left <= 0:
                    raise
                if pause == FIRST_PAUSE:
                    logger.warning(
                        "Connecting to the database failed; trying again for up to "
                        "%.1f s: %s",
                        left,
                        str(exc).strip(),
                    )
            time.sleep(min(pause, left))
            pause = min(pause * 2, LONGEST_PAUSE)
