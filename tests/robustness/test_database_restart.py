"""A crashed and restarted PostgreSQL (api.md 2 ``unavailable``, invariant 2).

The service runs under granian with production settings against a throwaway
PostgreSQL 15 cluster of its own; ``pg_ctl stop -m immediate`` crashes the
cluster (every backend killed, no shutdown checkpoint). While it is down every
request must get a bounded ``503 unavailable``; once it is back the service must
recover without a restart, and every capture acknowledged before the crash must
be there.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.robustness.conftest import (
    Service,
    all_sources,
    assert_receipts_hold,
    assert_stream_consistent,
    capture,
    capture_stream,
    envelope_error,
    scope_create,
    source_get,
)
from tests.robustness.processes import PostgresCluster, wait_until

pytestmark = pytest.mark.postgres

# How long a request waits for the database: POWERCONTEXT_DB_CONNECT_WAIT with
# persistent connections (the default), POWERCONTEXT_DB_POOL_TIMEOUT with the pool.
DATABASE_WAIT = 3.0
# A worker may queue a request behind a busy thread once, so twice that, plus slack
# for a loaded CI machine.
ANSWER_BOUND = 2 * DATABASE_WAIT + 10
# The two ways of connecting: Django's persistent connections (the default) and
# psycopg's pool.
CONNECTIONS = ("persistent", "pool")
# Long enough that psycopg's default reconnect backoff (1, 2, 4, 8, 16 s ...) would
# still be waiting when the database returns.
OUTAGE = 16.0
# Reconnecting on demand makes recovery immediate; 8 s is the pool's reconnect
# window (5 s by default) plus slack. The default backoff took 13 s and more here.
RECOVERY_BOUND = 8.0
# How long the database stays down under a request that waits for it.
DOWN_WHILE_WAITING = 3.0


def connections_env(connections: str, wait: float) -> dict[str, str]:
    """The service's environment for ``connections``, a request waiting up to
    ``wait`` seconds for the database."""
    if connections == "pool":
        return {
            "POWERCONTEXT_DB_POOL": "true",
            "POWERCONTEXT_DB_POOL_TIMEOUT": str(wait),
        }
    return {"POWERCONTEXT_DB_CONNECT_WAIT": str(wait)}


@pytest.fixture(params=CONNECTIONS)
def service(
    request: pytest.FixtureRequest,
    start_production: Callable[..., Service],
    throwaway_cluster: PostgresCluster,
) -> Service:
    """The service with persistent connections (the default) or with the pool."""
    return start_production(
        throwaway_cluster.url, **connections_env(request.param, DATABASE_WAIT)
    )


@pytest.fixture
def client(service: Service) -> Iterator[httpx.Client]:
    with service.client(timeout=ANSWER_BOUND + 20) as client:
        yield client


def in_parallel(count: int, work: Callable[[int], Any]) -> list[Any]:
    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(work, range(count)))


def captures(service: Service, scope_id: str, prefix: str, count: int) -> list[Any]:
    """``count`` concurrent new captures: ``(source_id, content, status, body)``."""

    def one(index: int) -> tuple[str, str, int, Any]:
        source_id, content = f"{prefix}{index}", f"{prefix} content {index}"
        with service.client() as client:
            response = capture(client, scope_id, source_id, content)
        return source_id, content, response.status_code, response.json()

    return in_parallel(count, one)


def statuses(results: list[Any]) -> list[int]:
    return [status for _, _, status, _ in results]


def timed(service: Service, method: str, path: str, **kwargs: Any) -> Any:
    """One request on a fresh connection: ``(seconds, response)``."""
    with service.client(timeout=ANSWER_BOUND + 20) as client:
        started = time.monotonic()
        response = client.request(method, path, **kwargs)
        return time.monotonic() - started, response


def test_while_the_database_is_down_requests_get_503_and_it_recovers_by_itself(
    service: Service, client: httpx.Client, throwaway_cluster: PostgresCluster
) -> None:
    scope_id = scope_create(client)
    before = captures(service, scope_id, "before", 12)
    assert statuses(before) == [202] * 12

    throwaway_cluster.crash()
    crashed_at = time.monotonic()
    outage_capture = {"scope_id": scope_id, "source_id": "retried", "content": "r"}
    requests = [
        ("POST", "/v1/sources/content", {"json": outage_capture}),
        ("POST", "/v1/sources/content", {"json": {**outage_capture, "source_id": "x"}}),
        ("POST", "/v1/sources/content", {"json": {**outage_capture, "source_id": "x"}}),
        ("GET", f"/v1/scopes/{scope_id}/sources/content/before0", {}),
        ("GET", f"/v1/scopes/{scope_id}/sources", {}),
        ("GET", f"/v1/scopes/{scope_id}", {}),
        ("GET", "/v1/scopes", {}),
        # The admin outside DRF: a session cookie makes it read the session table.
        ("GET", "/admin/", {"headers": {"Cookie": f"sessionid={'s' * 32}"}}),
    ]
    answers = in_parallel(
        len(requests),
        lambda i: timed(service, requests[i][0], requests[i][1], **requests[i][2]),
    )
    ready_seconds, ready = timed(service, "GET", "/health/ready")
    live_seconds, live = timed(service, "GET", "/health/live")

    for (method, path, _), (seconds, response) in zip(requests, answers, strict=True):
        assert response.status_code == 503, (method, path, response.text)
        assert envelope_error(response)["code"] == "unavailable"
        assert seconds < ANSWER_BOUND, (method, path, seconds)
    assert ready.status_code == 503
    assert ready.json() == {
        "status": "not_ready",
        "checks": {"database": "unavailable"},
    }
    assert ready_seconds < ANSWER_BOUND
    assert (live.status_code, live.json()) == (200, {"status": "ok"})
    assert live_seconds < 5

    time.sleep(max(0.0, OUTAGE - (time.monotonic() - crashed_at)))
    throwaway_cluster.start()
    back_at = time.monotonic()
    retried = wait_until(
        lambda: _accepted(capture(client, scope_id, "retried", "r")),
        timeout=60,
        what="the identical retry of the outage capture to be accepted",
    )
    recovery = time.monotonic() - back_at
    after = captures(service, scope_id, "after", 16)

    assert recovery < RECOVERY_BOUND, f"recovered {recovery:.1f}s after the database"
    assert statuses(after) == [202] * 16
    assert client.get("/health/ready").status_code == 200
    assert_receipts_hold(client, scope_id, [(s, c, r) for s, c, _, r in before])
    assert source_get(client, scope_id, "x").status_code == 404
    positions = [item["position"] for item in all_sources(client, scope_id)]
    assert positions == list(range(1, 12 + 1 + 16 + 1))
    assert retried.json()["position"] == 13


def test_every_capture_acknowledged_before_a_database_crash_survives_it(
    service: Service, throwaway_cluster: PostgresCluster
) -> None:
    """The crash hits a stream of captures; PostgreSQL recovers from its WAL."""
    with service.client() as client:
        scope_id = scope_create(client)

    attempts = capture_stream(
        service, scope_id, interrupt=throwaway_cluster.crash, after_acknowledged=60
    )
    throwaway_cluster.start()

    last_of_thread = {a.source_id.split("-")[0]: a for a in attempts}
    assert len(last_of_thread) == 8
    assert all(attempt.status == 503 for attempt in last_of_thread.values())
    assert {a.status for a in attempts} == {202, 503}
    assert {a.body["error"]["code"] for a in attempts if a.status == 503} == {
        "unavailable"
    }
    with service.client() as client:
        wait_until(
            lambda: client.get("/health/ready").status_code == 200,
            timeout=60,
            what="readiness after the database restarted",
        )
        stored = assert_stream_consistent(client, scope_id, attempts)
    assert len(stored) >= 60


def _accepted(response: httpx.Response) -> httpx.Response | None:
    assert response.status_code in (202, 503), response.text
    return response if response.status_code == 202 else None


def test_a_database_restart_between_requests_costs_no_request(
    service: Service, client: httpx.Client, throwaway_cluster: PostgresCluster
) -> None:
    """Connections left dead by a restart are replaced, not used: a persistent one
    is found by the check before reuse, a pooled one as it is handed out."""
    scope_id = scope_create(client)
    warm = captures(service, scope_id, "warm", 32)  # every thread's, every pool's

    throwaway_cluster.crash()
    throwaway_cluster.start()
    after = captures(service, scope_id, "after", 16)

    assert statuses(warm) == [202] * 32
    assert statuses(after) == [202] * 16, after
    positions = [item["position"] for item in all_sources(client, scope_id)]
    assert positions == list(range(1, 49))


def test_a_lone_request_after_a_restart_does_not_wait_out_the_broken_connections(
    start_production: Callable[..., Service], throwaway_cluster: PostgresCluster
) -> None:
    """One worker whose pool holds several connections the restart broke.

    psycopg's own checkout check sleeps 1 s, 2 s, 4 s ... between them: this
    request took 6 s with the default pool timeout and failed with 503 under a
    3 s one. Sweeping the pool at the first broken connection avoids the wait.
    """
    service = start_production(
        throwaway_cluster.url, workers=1, **connections_env("pool", DATABASE_WAIT)
    )
    with service.client() as client:
        scope_id = scope_create(client)
    warm = captures(service, scope_id, "warm", 32)  # 8 at a time: 4 pooled

    throwaway_cluster.crash()
    throwaway_cluster.start()
    with service.client() as client:
        started = time.monotonic()
        first = capture(client, scope_id, "first", "after the restart")
        seconds = time.monotonic() - started

    assert statuses(warm) == [202] * 32
    assert first.status_code == 202, first.text
    assert seconds < 2.0


@pytest.mark.parametrize("connections", CONNECTIONS)
def test_a_request_sent_while_the_database_restarts_waits_for_it(
    connections: str,
    start_production: Callable[..., Service],
    throwaway_cluster: PostgresCluster,
) -> None:
    """A request that finds the database down waits for it (up to the wait) and
    is answered once it is back, not failed at once."""
    service = start_production(
        throwaway_cluster.url, workers=1, **connections_env(connections, 60)
    )
    with service.client() as client:
        scope_id = scope_create(client)
    warm = captures(service, scope_id, "warm", 8)

    throwaway_cluster.crash()
    with ThreadPoolExecutor(max_workers=1) as pool:
        sent = pool.submit(
            timed,
            service,
            "POST",
            "/v1/sources/content",
            json={"scope_id": scope_id, "source_id": "waited", "content": "waited"},
        )
        time.sleep(DOWN_WHILE_WAITING)
        assert not sent.done(), sent.result()[1].text
        throwaway_cluster.start()
        seconds, answer = sent.result(timeout=60)

    assert statuses(warm) == [202] * 8
    assert answer.status_code == 202, answer.text
    assert answer.json()["position"] == 9
    assert seconds >= DOWN_WHILE_WAITING
