"""The recorder and the checker against a fake server: clean when the fake keeps
the contract, an anomaly when it ignores ``If-Match`` or answers a replay with a
new position."""

from __future__ import annotations

import time

import pytest

from tests.consistency import checker
from tests.consistency.fake_server import Store, serving
from tests.consistency.workload import Recorder, Workload


def record(store: Store, operations: int = 1500) -> checker.Report:
    """16 clients until ``operations`` were invoked (a minute at most: the machine
    may be busy)."""
    recorder = Recorder()
    with serving(store) as url:
        workload = Workload(url, "token", recorder, threads=16, generation_ops=300)
        workload.start()
        deadline = time.monotonic() + 60
        while len(recorder.events) < 2 * operations and time.monotonic() < deadline:
            time.sleep(0.1)
        workload.stop()
    return checker.check(recorder.events)


def test_a_server_that_keeps_the_contract_has_no_anomaly() -> None:
    report = record(Store())

    assert report.operations >= 1500
    assert (report.anomalies, report.unknown) == ([], [])


@pytest.mark.parametrize(
    ("bug", "kind"),
    [("ignore_if_match", "env:"), ("replay_new_position", "src:")],
)
def test_a_broken_server_is_caught(bug: str, kind: str) -> None:
    report = record(Store(**{bug: True}))

    assert report.unknown == []
    assert any(verdict.key.startswith(kind) for verdict in report.anomalies)
