"""A dead worker's gauges leave the metrics directory when another worker starts
(``powercontext.metrics.forget_dead_workers``; granian has no hook for a worker's
death); its counters stay in the sums, and a live worker's files are untouched."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from powercontext.metrics import forget_dead_workers

# A worker's samples: one live gauge and one counter, written to the directory.
WORKER = """
import sys
from prometheus_client import Counter, Gauge
Gauge("busy", "threads busy", multiprocess_mode="livesum").set(3)
Counter("served", "requests served").inc()
print("written", flush=True)
sys.stdin.read()  # runs until its stdin closes
"""


def worker(directory: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", WORKER],
        env={"PROMETHEUS_MULTIPROC_DIR": str(directory)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "written\n"
    return process


def test_the_dead_workers_gauges_go_and_the_rest_stays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dead, live = worker(tmp_path), worker(tmp_path)
    dead.communicate("")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path))
    try:
        forget_dead_workers()
    finally:
        live.communicate("")

    files = {path.name for path in tmp_path.glob("*.db")}
    assert f"gauge_livesum_{dead.pid}.db" not in files
    assert f"counter_{dead.pid}.db" in files
    assert {f"gauge_livesum_{live.pid}.db", f"counter_{live.pid}.db"} <= files


def test_without_a_metrics_directory_nothing_happens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR", raising=False)

    forget_dead_workers()
