"""Logs and metrics of a real server: three granian workers, production settings.

A scrape is answered by one worker but must add up all three; every line the
server writes - granian's own included - is one JSON object, and each request's
line carries the id of its response header.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.api.test_observability import sample
from tests.robustness.conftest import (
    Service,
    note_capture,
    scope_create,
    temporary_database,
)
from tests.robustness.processes import wait_until

pytestmark = pytest.mark.postgres

CAPTURES = 90


def test_a_burst_through_three_workers_adds_up_and_logs_json(
    start_production: Callable[..., Service],
) -> None:
    with temporary_database() as database_url:
        service = start_production(database_url, workers=3)
        with service.client() as client:
            scope_id = scope_create(client, key="observability")

        def capture(number: int) -> httpx.Response:
            with service.client() as client:
                return note_capture(client, scope_id, f"n-{number}")

        with ThreadPoolExecutor(9) as pool:
            responses = list(pool.map(capture, range(CAPTURES)))
        with service.client() as client:
            scrapes = [client.get("/metrics").text for _ in range(6)]

        pids = {line["process"] for line in _lines(service) if "process" in line}
        request_ids = {r.headers["X-PowerContext-Request-ID"] for r in responses}
        wait_until(
            lambda: request_ids <= _logged_request_ids(service),
            timeout=10,
            what="every response's request id in the log",
        )

    assert [r.status_code for r in responses] == [202] * CAPTURES
    labels = {"route": "v1/sources/working-notes", "method": "POST", "status": "202"}
    for text in scrapes:  # whichever worker answered, the sums are the same
        assert (
            sample(text, "powercontext_captures_total", outcome="accepted") == CAPTURES
        )
        assert (
            sample(text, "powercontext_http_request_duration_seconds_count", **labels)
            == CAPTURES
        )
    assert len(pids) >= 2, "granian's own lines name its launcher and workers"
    boots = [
        line for line in _lines(service) if "Spawning worker" in line.get("message", "")
    ]
    assert len(boots) == 3, "each of granian's lines is written once"
    assert not [
        line for line in _lines(service) if line.get("logger") == "granian.access"
    ], "one line per request: the application's, not also granian's access log"


def _lines(service: Service) -> list[dict]:
    """Every line the server wrote, each parsed as JSON (a line that is not fails)."""
    text = service.server.log_path.read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _logged_request_ids(service: Service) -> set[str]:
    return {
        line["request_id"]
        for line in _lines(service)
        if line.get("logger") == "powercontext.request"
    }
