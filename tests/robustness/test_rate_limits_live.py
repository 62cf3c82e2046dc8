"""Rate limits through Redis with two granian workers (spec/limits.md 3).

A private ``redis-server`` on a port of its own backs the limits, so stopping it
touches nothing else. A burst of concurrent writes over a limit of L/s lets
through L - plus whatever the bucket refills while the burst lasts - and the rest
get 429 with ``Retry-After``; both workers count in the same bucket. With Redis
stopped the service answers every request, without limits, and never a 5xx.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.robustness.conftest import Service, scope_create
from tests.robustness.processes import free_port, wait_until

pytestmark = pytest.mark.postgres

LIMIT = 20  # writes per second
BURST = 80
WORKERS = 2


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """A redis-server of our own on a free port, stopped after the test."""
    binary = shutil.which("redis-server")
    assert binary, "redis-server is missing: .ci/run installs it"
    port = free_port()
    process = subprocess.Popen(
        [
            binary,
            *("--port", str(port), "--bind", "127.0.0.1"),
            *("--save", "", "--appendonly", "no", "--dir", str(tmp_path)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: _pong(port), timeout=20, what="redis-server")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.kill()
        process.wait(timeout=20)


def _pong(port: int) -> bool:
    completed = subprocess.run(
        ["redis-cli", "-p", str(port), "ping"],
        capture_output=True,
        text=True,
        check=False,
    )
    return completed.stdout.strip() == "PONG"


def _burst(service: Service, scope_id: str, count: int) -> tuple[list[int], float]:
    """``count`` captures sent at once (a barrier); their statuses and how long
    the burst took to be answered."""
    barrier = threading.Barrier(count)
    retry_after: list[str] = []

    def send(number: int) -> int:
        with service.client() as client:
            barrier.wait()
            response = client.post(
                "/v1/sources/content",
                json={
                    "scope_id": scope_id,
                    "source_id": f"burst-{time.monotonic_ns()}-{number}",
                    "content": "x",
                },
            )
            if response.status_code == 429:
                retry_after.append(response.headers["Retry-After"])
            return response.status_code

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=count) as pool:
        statuses = list(pool.map(send, range(count)))
    elapsed = time.monotonic() - started
    assert all(value.isdigit() and int(value) >= 1 for value in retry_after)
    return statuses, elapsed


def _assert_limited(statuses: list[int], elapsed: float) -> None:
    """L got through, plus what the bucket refilled during the burst (and one
    per worker at the edge); the rest were 429."""
    accepted = statuses.count(202)
    refill = math.ceil(elapsed * LIMIT)
    assert set(statuses) <= {202, 429}, statuses
    assert LIMIT <= accepted <= LIMIT + refill + WORKERS, (accepted, elapsed)
    assert statuses.count(429) == BURST - accepted


def _port(redis_url: str) -> int:
    return int(redis_url.rsplit(":", 1)[1].split("/")[0])


@pytest.fixture
def limited(
    start_production: Callable[..., Service], fresh_database: str, redis_url: str
) -> Service:
    return start_production(
        fresh_database,
        workers=WORKERS,
        POWERCONTEXT_CACHE_URL=redis_url,
        POWERCONTEXT_RATE_LIMIT_WRITE=f"{LIMIT}/s",
    )


def test_a_burst_over_the_limit_is_shared_by_both_workers(limited: Service) -> None:
    with limited.client() as client:
        scope_id = scope_create(client)
    time.sleep(1.1)  # the scope creation was a write: let the bucket refill

    statuses, elapsed = _burst(limited, scope_id, BURST)

    _assert_limited(statuses, elapsed)


def test_without_redis_there_are_no_limits_and_no_5xx(
    start_production: Callable[..., Service], fresh_database: str, tmp_path: Path
) -> None:
    gone = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    service = start_production(
        fresh_database,
        workers=WORKERS,
        POWERCONTEXT_CACHE_URL=gone,
        POWERCONTEXT_RATE_LIMIT_WRITE=f"{LIMIT}/s",
    )
    with service.client() as client:
        scope_id = scope_create(client)

    statuses, _ = _burst(service, scope_id, BURST)

    assert statuses == [202] * BURST


def test_redis_stopping_under_load_keeps_the_service_up(
    limited: Service, redis_url: str
) -> None:
    with limited.client() as client:
        scope_id = scope_create(client)
        port = _port(redis_url)
        subprocess.run(
            ["redis-cli", "-p", str(port), "shutdown", "nosave"],
            capture_output=True,
            check=False,
        )
        wait_until(lambda: not _pong(port), timeout=20, what="redis-server to stop")

        statuses = [
            client.post(
                "/v1/sources/content",
                json={"scope_id": scope_id, "source_id": f"after-{n}", "content": "x"},
            ).status_code
            for n in range(3 * LIMIT)
        ]
        health = client.get("/health/live")

    assert statuses == [202] * (3 * LIMIT)
    assert health.status_code == 200


def test_limits_hold_after_redis_forgets_the_script(
    limited: Service, redis_url: str
) -> None:
    """A restarted or flushed Redis has no scripts: the next decision sends the
    script itself, and the limit still holds (no 5xx, no free pass)."""
    with limited.client() as client:
        scope_id = scope_create(client)
    flushed = subprocess.run(
        ["redis-cli", "-p", str(_port(redis_url)), "script", "flush"],
        capture_output=True,
        check=True,
        text=True,
    )
    assert flushed.stdout.strip() == "OK"
    time.sleep(1.1)  # the scope creation was a write: let the bucket refill

    statuses, elapsed = _burst(limited, scope_id, BURST)

    _assert_limited(statuses, elapsed)
