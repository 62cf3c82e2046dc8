"""The served process's request cycle (powercontext.wsgi, decision 0028): with
Django's receivers that can do nothing left out, every request still gives its
pooled connection back when it ends.

One worker, four threads and a pool of one connection (``POWERCONTEXT_DB_POOL``):
a request that kept its connection would leave the other three threads waiting for
the pool's timeout (1 s here) and answering ``503 unavailable``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.robustness.conftest import (
    Service,
    note_capture,
    scope_create,
    temporary_database,
)

pytestmark = pytest.mark.postgres

SENDERS = 4
PER_SENDER = 15


def test_four_threads_share_one_pooled_connection_request_after_request(
    start_production: Callable[..., Service],
) -> None:
    with temporary_database() as database_url:
        service = start_production(
            database_url,
            workers=1,
            POWERCONTEXT_DB_POOL="true",
            POWERCONTEXT_DB_POOL_MIN="1",
            POWERCONTEXT_DB_POOL_MAX="1",
            POWERCONTEXT_DB_POOL_TIMEOUT="1",
        )
        with service.client() as client:
            scope_id = scope_create(client, key="request-cycle")

        def send(sender: int) -> list[int]:
            statuses = []
            with service.client() as client:
                for number in range(PER_SENDER):
                    response = note_capture(
                        client, scope_id, f"n-{sender}-{number}", f"s-{sender}"
                    )
                    statuses.append(response.status_code)
                    statuses.append(client.get(f"/v1/scopes/{scope_id}").status_code)
            return statuses

        started = time.monotonic()
        with ThreadPoolExecutor(SENDERS) as pool:
            statuses = [s for sent in pool.map(send, range(SENDERS)) for s in sent]
        elapsed = time.monotonic() - started

        assert statuses.count(202) == SENDERS * PER_SENDER
        assert statuses.count(200) == SENDERS * PER_SENDER
        # Well under one pool timeout: no request ever waited for a kept connection.
        assert elapsed < 10, f"{len(statuses)} requests took {elapsed:.1f} s"
        with httpx.Client(base_url=service.url) as anonymous:
            assert anonymous.get("/health/ready").status_code == 200
