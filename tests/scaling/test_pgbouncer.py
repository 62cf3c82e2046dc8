"""The capture races through a real PgBouncer in transaction mode
(docs/operations.md, "PostgreSQL": the settings it needs).

PgBouncer 1.18 (Debian 12) cannot carry protocol-level prepared statements, so
the service runs with ``POWERCONTEXT_DB_DISABLE_PREPARE=true``; two workers of 8
threads, each thread keeping its own client connection, share 4 server
connections, so every request's transactions land on whichever server connection
is free.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.robustness.conftest import (
    Service,
    all_sources,
    capture,
    production_env,
    scope_create,
    temporary_database,
)
from tests.robustness.processes import LaunchedServer, mint_token
from tests.scaling.clusters import PgBouncer

pytestmark = pytest.mark.postgres

SERVER_CONNECTIONS = 4


@pytest.fixture(scope="module")
def bounced(
    tmp_path_factory: pytest.TempPathFactory, static_root: Path
) -> Iterator[tuple[Service, PgBouncer]]:
    port = urlsplit(os.environ["DATABASE_URL"]).port or 5432
    with temporary_database() as direct_url:
        env = production_env(direct_url, static_root)  # migrations: directly
        bouncer = PgBouncer(port, pool_size=SERVER_CONNECTIONS)
        try:
            bouncer.start()
            server = LaunchedServer(
                {
                    **env,
                    "DATABASE_URL": bouncer.url(urlsplit(direct_url).path[1:]),
                    "POWERCONTEXT_DB_DISABLE_PREPARE": "true",
                },
                tmp_path_factory.mktemp("pgbouncer-logs"),
                workers=2,
                threads=8,
            )
            try:
                server.start()
                yield Service(server, mint_token(env)), bouncer
            finally:
                server.stop()
        finally:
            bouncer.stop()


def race(
    service: Service, count: int, call: Callable[[httpx.Client, int], Any]
) -> list:
    def one(number: int) -> Any:
        with service.client() as client:
            return call(client, number)

    with ThreadPoolExecutor(16) as pool:
        return list(pool.map(one, range(count)))


def test_identical_captures_give_one_row_and_identical_receipts(
    bounced: tuple[Service, PgBouncer],
) -> None:
    service, _ = bounced
    with service.client() as client:
        scope_id = scope_create(client, key="identical")

    responses = race(
        service, 32, lambda client, _: capture(client, scope_id, "same", "same value")
    )

    assert [r.status_code for r in responses] == [202] * 32
    assert len({r.text for r in responses}) == 1
    assert Counter(r.headers.get("Idempotent-Replayed") for r in responses) == {
        None: 1,
        "true": 31,
    }


def test_distinct_captures_in_many_scopes_get_gap_free_positions(
    bounced: tuple[Service, PgBouncer],
) -> None:
    service, bouncer = bounced
    with service.client() as client:
        scopes = [scope_create(client, key=f"gap-free {n}") for n in range(6)]

    responses = race(
        service,
        120,
        lambda client, n: capture(client, scopes[n % 6], f"s-{n}", f"value {n}"),
    )

    assert [r.status_code for r in responses] == [202] * 120
    with service.client() as client:
        for scope_id in scopes:
            positions = [item["position"] for item in all_sources(client, scope_id)]
            assert positions == list(range(1, 21))
    servers = [row for row in bouncer.show("SERVERS") if row["user"] == "postgres"]
    assert 0 < len(servers) <= SERVER_CONNECTIONS


def test_racing_envelope_writes_get_one_version_each(
    bounced: tuple[Service, PgBouncer],
) -> None:
    service, _ = bounced
    with service.client() as client:
        scope_id = scope_create(client, key="envelope")
    envelope = f"/v1/scopes/{scope_id}/sessions/s-1/envelope"

    responses = race(
        service,
        24,
        lambda client, n: client.put(envelope, json={"meta": {"x-writer": n}}),
    )

    assert sorted(r.status_code for r in responses) == [200] * 23 + [201]
    versions = sorted(int(r.headers["ETag"].strip('"')) for r in responses)
    assert versions == list(range(1, 25))
