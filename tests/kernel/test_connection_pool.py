"""The PostgreSQL backend's pool hands out the connection given back last
(``powercontext.db.postgresql.RecentFirstPool``): a worker serving one request
at a time keeps talking to one warm PostgreSQL backend instead of taking each of
its idle connections in turn."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection

from powercontext.db.postgresql.base import DatabaseWrapper, RecentFirstPool

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


@pytest.fixture
def pooled() -> Iterator[DatabaseWrapper]:
    """A wrapper of the test database with a pool of three connections."""
    if connection.vendor != "postgresql":
        pytest.fail("this test needs PostgreSQL (DATABASE_URL)")
    settings = {
        **connection.settings_dict,
        "CONN_MAX_AGE": 0,
        "OPTIONS": {
            **connection.settings_dict["OPTIONS"],
            "pool": {"min_size": 3, "max_size": 3, "timeout": 5},
        },
    }
    wrapper = DatabaseWrapper(settings, alias="recent_first_pool_test")
    try:
        yield wrapper
    finally:
        wrapper.close()
        wrapper.close_pool()


def backend_pid(wrapper: DatabaseWrapper) -> Any:
    with wrapper.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def test_one_request_after_another_uses_the_same_backend(
    pooled: DatabaseWrapper,
) -> None:
    assert isinstance(pooled.pool, RecentFirstPool)
    pooled.pool.open(wait=True, timeout=10)  # all three connections idle

    pids = []
    for _ in range(6):
        pids.append(backend_pid(pooled))
        pooled.close()  # the end of a request: the connection goes back

    assert len(set(pids)) == 1, pids


def test_the_longest_idle_connections_stay_at_the_end_the_pool_shrinks_from(
    pooled: DatabaseWrapper,
) -> None:
    pool = pooled.pool
    assert pool is not None
    pool.open(wait=True, timeout=10)
    first, second, third = (pool.getconn() for _ in range(3))
    for conn in (first, second, third):
        pool.putconn(conn)

    taken = pool.getconn()
    assert taken is third
    assert list(pool._pool) == [first, second]  # oldest first
    pool.putconn(taken)
