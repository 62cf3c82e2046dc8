"""The bounded consistency campaign of ``make test``: a minute of 16 clients
against the service under granian on a private PostgreSQL cluster, while every
kind of fault is injected at least once; the history must be linearizable.

``make test-consistency DURATION=...`` runs the same campaign for longer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.consistency import campaign

pytestmark = [pytest.mark.postgres, pytest.mark.alone, pytest.mark.timeout(900)]

FAULTS = {
    "postgres-restart-fast",
    "postgres-restart-immediate",
    "kill-9-worker",
    "proxy-reset",
    "proxy-stall-3s",
    "proxy-drop-4s",
}


def test_a_minute_under_every_fault_is_linearizable(tmp_path: Path) -> None:
    result = campaign.run(60, tmp_path, interval=(4.0, 6.0), seed=34)
    print(result.line())

    assert result.fault_failures == []
    assert set(result.faults) == FAULTS
    assert result.types["info"] > 0  # the faults cut requests short
    assert result.report.operations > 1000
    assert result.report.unknown == []
    assert result.report.anomalies == [], result.windows
    # No input and no fault makes a 500: an outage is 503 unavailable.
    assert result.server_errors == 0, result.history
