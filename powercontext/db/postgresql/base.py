"""Django's PostgreSQL backend, checking pooled connections as they are handed out.

A database restart breaks every idle connection in a worker's pool at once, and
the pool only notices when it hands one out: without a check, each of them fails
a request although the database is back. psycopg's own checkout check (Django's
``CONN_HEALTH_CHECKS``) sleeps 1 s, 2 s, 4 s ... after each broken connection
before it tries the next, so a lone request meeting four of them outwaits the
pool timeout and fails all the same. Here a broken connection is discarded, the
whole pool is swept at once (``ConnectionPool.check()`` replaces every broken
idle connection) and a connection is taken again, without sleeping: the first
request after a restart waits only for one new connection.

The check costs nothing on a healthy connection: an idle connection has nothing
to read, while one the server closed (restart, crash, termination) has an EOF or
a termination notice waiting on its socket. Only a connection with something to
read gets the round-trip check that decides.
"""

from __future__ import annotations

import select
from typing import Any

import psycopg
from django.db.backends.postgresql import base
from psycopg_pool import ConnectionPool


def _may_be_broken(connection: psycopg.Connection[Any]) -> bool:
    """Whether the idle ``connection`` has data (or EOF) waiting on its socket."""
    if connection.closed:
        return True
    try:
        readable, _, _ = select.select([connection.fileno()], [], [], 0)
    except (OSError, ValueError, psycopg.Error):
        return True
    return bool(readable)


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params: dict[str, Any]) -> Any:
        connection = super().get_new_connection(conn_params)
        pool: ConnectionPool | None = self.pool  # type: ignore[attr-defined]  # stubs
        if pool is None or not _may_be_broken(connection):
            return connection
        try:
            ConnectionPool.check_connection(connection)
        except psycopg.Error:
            pool.putconn(connection)  # broken: the pool discards and replaces it
            pool.check()  # the same restart broke its idle siblings
            connection = super().get_new_connection(conn_params)
        return connection
