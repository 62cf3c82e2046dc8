"""``kill -9`` of the whole server in the middle of a capture stream (invariant 2).

The service runs under granian with production settings on a database of its
own. Eight threads capture new Sources into one scope; after 60 of them were
acknowledged the master and every worker are killed at once, and the server is
started again on the same database. Whatever a client was told must hold.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.robustness.conftest import (
    Service,
    assert_stream_consistent,
    capture_stream,
    scope_create,
)

pytestmark = pytest.mark.postgres


def test_every_acknowledged_capture_survives_kill_9_of_the_server(
    start_production: Callable[..., Service], fresh_database: str
) -> None:
    service = start_production(fresh_database)
    with service.client() as client:
        scope_id = scope_create(client)

    attempts = capture_stream(
        service, scope_id, interrupt=service.server.kill, after_acknowledged=60
    )
    service.server.start()

    last_of_thread = {a.source_id.split("-")[0]: a for a in attempts}
    # Every thread was still sending when the server died: the kill was mid-stream.
    assert len(last_of_thread) == 8
    assert all(attempt.status is None for attempt in last_of_thread.values())
    assert {a.status for a in attempts} == {202, None}
    with service.client() as client:
        stored = assert_stream_consistent(client, scope_id, attempts)
    assert len(stored) >= 60
