"""The embedded SQLite default keeps the registry rules under concurrency (api.md 5).

granian serves the local settings (``make run``'s) on a SQLite file of its own
with 2 workers x 4 threads, so captures race across processes as well as threads.
Writers must wait for SQLite's lock (WAL, IMMEDIATE transactions, busy timeout),
never fail with "database is locked". Independent of ``DATABASE_URL``, so it runs
in both suite runs.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from tests.robustness.conftest import Service, all_sources, capture, scope_create
from tests.robustness.processes import LaunchedServer, manage, mint_token, service_env


@pytest.fixture(scope="module")
def sqlite_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """One server for the module; each test races in a scope of its own."""
    directory = tmp_path_factory.mktemp("sqlite-server")
    env = service_env(
        f"sqlite:///{directory / 'registry.sqlite3'}", "powercontext.settings.local"
    )
    manage(env, "migrate", "--noinput", "-v", "0")
    server = LaunchedServer(env, directory, workers=2, threads=4)
    try:
        server.start()
        yield Service(server, mint_token(env))
    finally:
        server.stop()


@pytest.fixture
def scope_id(sqlite_service: Service, request: pytest.FixtureRequest) -> str:
    with sqlite_service.client() as client:
        return scope_create(client, key=request.node.name)


def race(service: Service, count: int, send: Callable[[Any, int], Any]) -> list[Any]:
    """``send(client, i)`` from ``count`` threads, released together by a barrier.

    Each thread opens its connection before the barrier, so the requests arrive
    together. Returns ``(status, body, Idempotent-Replayed header)`` per thread.
    """
    barrier = threading.Barrier(count)

    def run(index: int) -> tuple[int, Any, str | None]:
        with service.client(timeout=120) as client:
            assert client.get("/health/live").status_code == 200
            barrier.wait(timeout=60)
            response = send(client, index)
        return (
            response.status_code,
            response.json(),
            response.headers.get("Idempotent-Replayed"),
        )

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(run, range(count)))


def test_16_concurrent_new_captures_get_exactly_positions_1_to_16(
    sqlite_service: Service, scope_id: str
) -> None:
    results = race(
        sqlite_service,
        16,
        lambda client, i: capture(client, scope_id, f"s{i}", f"content {i}"),
    )

    assert [status for status, _, _ in results] == [202] * 16, results
    assert sorted(body["position"] for _, body, _ in results) == list(range(1, 17))
    with sqlite_service.client() as client:
        stored = all_sources(client, scope_id)
    assert {(item["source_id"], item["position"]) for item in stored} == {
        (body["source"]["source_id"], body["position"]) for _, body, _ in results
    }


def test_8_identical_captures_get_one_row_and_the_same_receipt(
    sqlite_service: Service, scope_id: str
) -> None:
    results = race(
        sqlite_service, 8, lambda client, i: capture(client, scope_id, "same", "same")
    )

    assert [status for status, _, _ in results] == [202] * 8, results
    assert [body for _, body, _ in results] == [results[0][1]] * 8
    assert results[0][1]["position"] == 1
    assert Counter(header for _, _, header in results) == {None: 1, "true": 7}
    with sqlite_service.client() as client:
        assert [item["source_id"] for item in all_sources(client, scope_id)] == ["same"]


def test_8_different_contents_for_one_identity_give_one_202_and_7_conflicts(
    sqlite_service: Service, scope_id: str
) -> None:
    results = race(
        sqlite_service,
        8,
        lambda client, i: capture(client, scope_id, "contested", f"version {i}"),
    )

    assert Counter(status for status, _, _ in results) == {202: 1, 409: 7}, results
    assert {body["error"]["code"] for status, body, _ in results if status == 409} == {
        "source_conflict"
    }
    (winner,) = (body for status, body, _ in results if status == 202)
    with sqlite_service.client() as client:
        (stored,) = all_sources(client, scope_id)
        attempts = client.get(
            f"/v1/scopes/{scope_id}/source-attempts/content/contested"
        ).json()["items"]
    assert stored["position"] == winner["position"] == 1
    assert Counter(attempt["outcome"] for attempt in attempts) == {
        "accepted": 1,
        "conflict": 7,
    }
