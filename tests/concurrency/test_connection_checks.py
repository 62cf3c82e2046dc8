"""The check of a persistent connection before a request reuses it (PostgreSQL).

With the pool off (``POWERCONTEXT_DB_POOL=false``) Django keeps a connection per
thread and, with ``CONN_HEALTH_CHECKS``, asks the backend's ``is_usable()`` at each
request's first query. Django's own answer is a ``SELECT 1``: a round trip per
request. Ours looks at the socket first: an idle healthy connection has nothing
to read, one the server closed has an end of file or a termination notice there,
and only then is the round trip made.

Each test opens a connection of its own (``connections.create_connection``): the
test's connection is inside the test's transaction, where the round trip is made
whatever the socket says.
"""

from __future__ import annotations

import select
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import DEFAULT_DB_ALIAS, connection, connections

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
