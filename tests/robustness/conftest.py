"""Fixtures that start real things - the server (granian), databases, PostgreSQL clusters - and
always take them down again, also when the test failed."""

from __future__ import annotations

import contextlib
import os
import secrets
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.robustness.processes import (
    LaunchedServer,
    PostgresCluster,
    database_create,
    database_drop,
    manage,
    mint_token,
    service_env,
)

PRODUCTION = "powercontext.settings.production"


@dataclass
class Service:
    """A running service, the token to call it with, and its server."""

    server: LaunchedServer
    token: str

    @property
    def url(self) -> str:
        return self.server.url

    def client(self, timeout: float = 30) -> httpx.Client:
        return httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=timeout,
        )


@pytest.fixture
def start_server(tmp_path: Path) -> Iterator[Callable[..., LaunchedServer]]:
    """``start_server(env, workers=2, threads=4)``; every server is stopped after."""
    with contextlib.ExitStack() as started:

        def start(env: dict[str, str], **options: Any) -> LaunchedServer:
            server = LaunchedServer(env, tmp_path, **options)
            started.callback(server.stop)
            server.start()
            return server

        yield start


@contextlib.contextmanager
def temporary_database() -> Iterator[str]:
    """A new, empty database on the suite's PostgreSQL server, dropped afterwards."""
    server_url = os.environ["DATABASE_URL"]
    name = f"pc_robustness_{secrets.token_hex(6)}"
    url = database_create(server_url, name)
    try:
        yield url
    finally:
        database_drop(server_url, name)


@contextlib.contextmanager
def suite_database(directory: Path) -> Iterator[str]:
    """A fresh database of the kind this suite run uses (``DATABASE_URL``'s engine).

    On PostgreSQL a temporary database on the same server; on SQLite a new file.
    """
    if os.environ["DATABASE_URL"].startswith(("postgres://", "postgresql://")):
        with temporary_database() as url:
            yield url
    else:
        yield f"sqlite:///{directory / 'service.sqlite3'}"


@pytest.fixture
def fresh_database() -> Iterator[str]:
    with temporary_database() as url:
        yield url


@pytest.fixture
def throwaway_cluster() -> Iterator[PostgresCluster]:
    """A PostgreSQL 15 cluster of our own (its own port and files), removed after."""
    cluster = PostgresCluster()
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture(scope="package")
def fault_cluster() -> Iterator[PostgresCluster]:
    """A throwaway cluster the fault tests of this package stop and start."""
    cluster = PostgresCluster()
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture(scope="package")
def fault_service(
    fault_cluster: PostgresCluster,
    tmp_path_factory: pytest.TempPathFactory,
    static_root: Path,
) -> Iterator[Service]:
    """Production settings on ``fault_cluster``; a request waits 3 s for a new
    database connection before it is answered 503 (as in test_database_restart.py)."""
    with serving_production(
        fault_cluster.url,
        tmp_path_factory.mktemp("faults"),
        static_root,
        POWERCONTEXT_DB_CONNECT_WAIT="3",
    ) as service:
        yield service


@pytest.fixture(scope="session")
def static_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``collectstatic`` output for production settings, once per test process."""
    root = tmp_path_factory.mktemp("static")
    env = service_env("postgres://unused@127.0.0.1/unused", PRODUCTION)
    manage({**env, "DJANGO_STATIC_ROOT": str(root)}, "collectstatic", "--noinput")
    return root


def production_env(
    database_url: str, static_root: Path, **extra: str
) -> dict[str, str]:
    """Production settings for ``database_url``, migrated (HTTPS redirect off: the
    tests talk plain HTTP on loopback; static files from ``static_root``)."""
    env = service_env(
        database_url, PRODUCTION, DJANGO_STATIC_ROOT=str(static_root), **extra
    )
    manage(env, "migrate", "--noinput", "-v", "0")
    return env


@contextlib.contextmanager
def serving_production(
    database_url: str, log_dir: Path, static_root: Path, **extra_env: str
) -> Iterator[Service]:
    """Our service as production runs it, with a ``createtoken`` admin token.

    For fixtures wider than one test; the server is stopped on exit.
    """
    env = production_env(database_url, static_root, **extra_env)
    server = LaunchedServer(env, log_dir)
    try:
        server.start()
        yield Service(server, mint_token(env))
    finally:
        server.stop()


@pytest.fixture
def start_production(
    start_server: Callable[..., LaunchedServer], static_root: Path
) -> Callable[..., Service]:
    """``start_production(database_url, workers=2, **env)``: the service as
    production runs it.

    Migrates the database, mints a ``*:admin`` token with ``createtoken``; the
    server is stopped after the test (and can be killed and started in it).
    """

    def start(database_url: str, *, workers: int = 2, **extra_env: str) -> Service:
        env = production_env(database_url, static_root, **extra_env)
        return Service(start_server(env, workers=workers), mint_token(env))

    return start


# --- Talking to a live service --------------------------------------------------------


def scope_create(client: httpx.Client, key: str = "robustness") -> str:
    response = client.post(
        "/v1/scopes",
        json={"title": "Robustness", "summary": "Live server", "idempotency_key": key},
    )
    assert response.status_code == 201, response.text
    return str(response.json()["scope_id"])


def capture(
    client: httpx.Client, scope_id: str, source_id: str, content: str
) -> httpx.Response:
    return client.post(
        "/v1/sources/content",
        json={"scope_id": scope_id, "source_id": source_id, "content": content},
    )


def note_capture(
    client: httpx.Client, scope_id: str, source_id: str, session_id: str = "s-1"
) -> httpx.Response:
    """A new Working Note (``POST /v1/sources/working-notes``)."""
    return client.post(
        "/v1/sources/working-notes",
        json={
            "scope_id": scope_id,
            "source_id": source_id,
            "content": "a finding",
            "session_id": session_id,
            "note_kind": "inspection",
        },
    )


def source_get(client: httpx.Client, scope_id: str, source_id: str) -> httpx.Response:
    return client.get(f"/v1/scopes/{scope_id}/sources/content/{source_id}")


def all_sources(client: httpx.Client, scope_id: str) -> list[dict[str, Any]]:
    """Every SourceRecord of the scope, walking the list's cursor to the end."""
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": 100}
    while True:
        response = client.get(f"/v1/scopes/{scope_id}/sources", params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        items.extend(page["items"])
        if page["next_cursor"] is None:
            return items
        params = {"limit": 100, "cursor": page["next_cursor"]}


def envelope_error(response: httpx.Response) -> dict[str, Any]:
    """The error object, after checking the envelope's exact shape and headers."""
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    assert response.headers["Content-Type"] == "application/json"
    assert len(response.headers["X-PowerContext-Request-ID"]) == 16
    return dict(body["error"])


def assert_receipts_hold(
    client: httpx.Client, scope_id: str, acknowledged: list[tuple[str, str, Any]]
) -> None:
    """Each ``(source_id, content, receipt)`` a client got a 202 for is stored at
    the receipt's position with that content, and replaying it answers the
    identical receipt."""
    for source_id, content, receipt in acknowledged:
        stored = source_get(client, scope_id, source_id)
        assert stored.status_code == 200, (source_id, stored.text)
        assert (stored.json()["position"], stored.json()["content"]) == (
            receipt["position"],
            content,
        )
        replay = capture(client, scope_id, source_id, content)
        assert (replay.status_code, replay.json()) == (202, receipt)
        assert replay.headers["Idempotent-Replayed"] == "true"


# --- A stream of concurrent captures ----------------------------------------------------


@dataclass(frozen=True)
class Attempt:
    """One capture a stream sent; ``status`` is None when no answer arrived."""

    source_id: str
    content: str
    status: int | None
    body: Any


def capture_stream(
    service: Service,
    scope_id: str,
    *,
    interrupt: Callable[[], None],
    after_acknowledged: int,
    threads: int = 8,
    per_thread: int = 400,
) -> list[Attempt]:
    """Capture new Sources from ``threads`` threads; call ``interrupt`` mid-stream.

    Each thread sends captures one after another (distinct ids, varied content)
    until one is not answered 202 - a connection error or an error status - or
    it has sent ``per_thread``. ``interrupt`` runs once ``after_acknowledged``
    captures got a 202, while the threads keep sending. Returns every attempt.
    """
    attempts: list[Attempt] = []
    acknowledged = threading.Semaphore(0)

    def send(thread: int) -> None:
        with service.client(timeout=60) as client:
            for index in range(per_thread):
                source_id = f"t{thread}-{index}"
                content = (
                    f"thread {thread} capture {index} \u00e9\u2603\U0001f680 "
                    + "x" * index
                )
                try:
                    response = capture(client, scope_id, source_id, content)
                except httpx.TransportError:
                    attempts.append(Attempt(source_id, content, None, None))
                    return
                attempts.append(
                    Attempt(source_id, content, response.status_code, response.json())
                )
                if response.status_code != 202:
                    return
                acknowledged.release()

    with ThreadPoolExecutor(max_workers=threads) as pool:
        senders = [pool.submit(send, thread) for thread in range(threads)]
        for _ in range(after_acknowledged):
            assert acknowledged.acquire(timeout=60), "the capture stream stalled"
        interrupt()
        for sender in senders:
            sender.result(timeout=180)
    return attempts


def assert_stream_consistent(
    client: httpx.Client, scope_id: str, attempts: list[Attempt]
) -> list[dict[str, Any]]:
    """What a stream left behind is consistent with what its clients were told.

    Every 202 is stored with its position and content and replays identically;
    an unanswered (or 503) capture may be missing, but if stored it holds exactly
    the content that was sent; nothing else is stored; positions are 1..N with
    no gap, and the journal's high watermark is N. Returns the stored records.
    """
    sent = {attempt.source_id: attempt.content for attempt in attempts}
    stored = all_sources(client, scope_id)
    window = client.get(f"/v1/scopes/{scope_id}/sources/window", params={"limit": 1})

    assert [item["position"] for item in stored] == list(range(1, len(stored) + 1))
    assert window.json()["high_watermark"] == len(stored)
    assert {item["source_id"]: item["content"] for item in stored}.items() <= (
        sent.items()
    )
    assert all(
        [attempt["outcome"] for attempt in record["attempts"]] == ["accepted"]
        for record in _all_audit_records(client, scope_id)
    ), "every stored Source has exactly its accepted attempt, written with it"
    assert_receipts_hold(
        client,
        scope_id,
        [(a.source_id, a.content, a.body) for a in attempts if a.status == 202],
    )
    return stored


def _all_audit_records(client: httpx.Client, scope_id: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": 100}
    while True:
        response = client.get(f"/v1/scopes/{scope_id}/source-audit", params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        records.extend(page["items"])
        if page["next_cursor"] is None:
            return records
        params = {"limit": 100, "cursor": page["next_cursor"]}
