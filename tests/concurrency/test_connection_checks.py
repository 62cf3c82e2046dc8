"""Persistent connections (PostgreSQL): the check before a request reuses one, and
the wait of a new one for a database that refuses connections.

With persistent connections (the default; ``POWERCONTEXT_DB_POOL=false``) Django
keeps a connection per thread and, with ``CONN_HEALTH_CHECKS``, asks the backend's
``is_usable()`` at each request's first query. Django's own answer is a ``SELECT 1``: a round trip per
request. Ours looks at the socket first: an idle healthy connection has nothing
to read, one the server closed has an end of file or a termination notice there,
and only then is the round trip made.

Each test opens a connection of its own (``connections.create_connection``): the
test's connection is inside the test's transaction, where the round trip is made
whatever the socket says.
"""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import DEFAULT_DB_ALIAS, OperationalError, connection, connections
from prometheus_client import REGISTRY

from powercontext.db.postgresql.base import CONNECT_WAIT, DatabaseWrapper

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


@pytest.fixture
def own_connection() -> Iterator[Any]:
    wrapper = connections.create_connection(DEFAULT_DB_ALIAS)
    wrapper.ensure_connection()
    try:
        yield wrapper
    finally:
        wrapper.close()


def traced(wrapper: Any, path: Path) -> bool:
    """``wrapper.is_usable()``, with what it sends and receives written to ``path``
    (libpq's protocol trace)."""
    with path.open("w") as trace:
        wrapper.connection.pgconn.trace(trace.fileno())
        try:
            return bool(wrapper.is_usable())
        finally:
            wrapper.connection.pgconn.untrace()


def test_a_healthy_idle_connection_is_usable_without_a_round_trip(
    own_connection: Any, tmp_path: Path
) -> None:
    trace = tmp_path / "trace"

    assert traced(own_connection, trace)
    assert trace.read_text() == ""


def test_a_connection_in_a_transaction_is_checked_with_a_round_trip(
    own_connection: Any, tmp_path: Path
) -> None:
    trace = tmp_path / "trace"
    own_connection.set_autocommit(False)
    with own_connection.cursor() as cursor:
        cursor.execute("SELECT 1")

    assert traced(own_connection, trace)
    assert "SELECT 1" in trace.read_text()
    own_connection.rollback()
    own_connection.set_autocommit(True)


def test_a_connection_the_server_ended_is_not_usable(own_connection: Any) -> None:
    pid = own_connection.connection.info.backend_pid
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
        assert cursor.fetchone() == (True,)
    # The termination notice, then the end of file, reach the socket.
    readable, _, _ = select.select([own_connection.connection.fileno()], [], [], 5)
    assert readable

    assert not own_connection.is_usable()


def connecting(**changes: Any) -> DatabaseWrapper:
    """A connection of its own to the test database's server with ``changes`` made
    to its settings; not connected yet."""
    settings = {**connection.settings_dict, **changes}
    settings["OPTIONS"] = {**settings["OPTIONS"], "connect_timeout": 2}
    return DatabaseWrapper(settings, alias="connecting")


def connect_failures() -> float:
    """``powercontext_db_connect_failures_total`` as /metrics shows it."""
    return REGISTRY.get_sample_value("powercontext_db_connect_failures_total") or 0.0


def unused_port() -> int:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        return int(unused.getsockname()[1])


def seconds_to_fail(wrapper: DatabaseWrapper) -> float:
    started = time.monotonic()
    with pytest.raises(OperationalError):
        wrapper.ensure_connection()
    return time.monotonic() - started


def test_a_new_connection_waits_for_a_database_that_refuses_connections() -> None:
    """Nothing listens on the port: tried again until the wait is over."""
    wrapper = connecting(PORT=unused_port(), **{CONNECT_WAIT: 1.5})
    failures_before = connect_failures()

    assert 1.5 <= seconds_to_fail(wrapper) < 5
    # 50 ms, doubling up to 0.5 s: at least 5 attempts in 1.5 s, each counted.
    assert connect_failures() - failures_before >= 5


def test_a_new_connection_without_a_wait_fails_at_once() -> None:
    """The replica's entry: an unreachable replica sends reads to the primary."""
    wrapper = connecting(PORT=unused_port(), **{CONNECT_WAIT: 0.0})

    assert seconds_to_fail(wrapper) < 1
