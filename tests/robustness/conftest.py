"""Fixtures that start real things - gunicorn, databases, PostgreSQL clusters - and
always take them down again, also when the test failed."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.robustness.processes import (
    Gunicorn,
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
    """A running service, the token to call it with, and its gunicorn."""

    server: Gunicorn
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
def start_gunicorn(tmp_path: Path) -> Iterator[Callable[..., Gunicorn]]:
    """``start_gunicorn(env, workers=2, threads=4)``; every server is stopped after."""
    started: list[Gunicorn] = []

    def start(env: dict[str, str], **options: Any) -> Gunicorn:
        server = Gunicorn(env, tmp_path, **options)
        started.append(server)
        server.start()
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def fresh_database() -> Iterator[str]:
    """A new, empty database on the suite's PostgreSQL server, dropped afterwards."""
    server_url = os.environ["DATABASE_URL"]
    name = f"pc_robustness_{secrets.token_hex(6)}"
    url = database_create(server_url, name)
    try:
        yield url
    finally:
        database_drop(server_url, name)


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


@pytest.fixture(scope="session")
def static_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``collectstatic`` output for production settings, once per test process."""
    root = tmp_path_factory.mktemp("static")
    env = service_env("postgres://unused@127.0.0.1/unused", PRODUCTION)
    manage({**env, "DJANGO_STATIC_ROOT": str(root)}, "collectstatic", "--noinput")
    return root


@pytest.fixture
def start_production(
    start_gunicorn: Callable[..., Gunicorn], static_root: Path
) -> Callable[..., Service]:
    """``start_production(database_url, **env)``: our service as production runs it.

    Migrates the database, mints a ``*:admin`` token with ``createtoken`` and
    serves with the production settings (collected static files, HTTPS redirect
    off because the test talks plain HTTP on loopback).
    """

    def start(database_url: str, **extra_env: str) -> Service:
        env = service_env(
            database_url, PRODUCTION, DJANGO_STATIC_ROOT=str(static_root), **extra_env
        )
        manage(env, "migrate", "--noinput", "-v", "0")
        return Service(start_gunicorn(env), mint_token(env))

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
