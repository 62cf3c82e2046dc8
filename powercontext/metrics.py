"""Prometheus metrics, correct across the server's worker processes.

The launcher (``powercontext.serve``) sets ``PROMETHEUS_MULTIPROC_DIR`` before the
workers start (a fresh directory per server), so every process writes its samples
to files there and a scrape, answered by any one worker, adds up all of them
(prometheus_client's multiprocess mode; a dead worker's counters are kept, its
gauges dropped by ``forget_dead_workers`` when its replacement starts). Without
the variable - tests, ``manage.py`` - the metrics live in this process only.

What is counted (docs/operations.md, "Metrics"): request latency by route pattern,
method and status; capture outcomes; the database pool's waits, wait time and
errors; rate-limit refusals and the times the limiter could not reach Redis.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.registry import REGISTRY

MULTIPROC_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"

REQUEST_SECONDS = Histogram(
    "powercontext_http_request_duration_seconds",
    "Time to answer a request, by route pattern, method and status.",
    ["route", "method", "status"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
CAPTURES = Counter(
    "powercontext_captures",
    "Capture attempts by outcome: accepted, replayed, conflict, rejected.",
    ["outcome"],
)
RATE_LIMITED = Counter(
    "powercontext_rate_limited",
    "Requests refused by a rate limit (429), by limit.",
    ["limit"],
)
RATE_LIMIT_BACKEND_FAILURES = Counter(
    "powercontext_rate_limit_backend_failures",
    "Rate-limit decisions skipped because Redis could not be reached (fail open).",
)
DB_POOL_WAITS = Counter(
    "powercontext_db_pool_waits",
    "Requests for a database connection that had to wait for one.",
)
DB_POOL_WAIT_SECONDS = Counter(
    "powercontext_db_pool_wait_seconds",
    "Time spent waiting for a database connection from the pool.",
)
DB_POOL_ERRORS = Counter(
    "powercontext_db_pool_errors",
    "Pool failures: connection requests that timed out, connection attempts that "
    "failed, and connections found broken.",
)
DB_CONNECT_FAILURES = Counter(
    "powercontext_db_connect_failures",
    "Attempts to open a persistent database connection that failed (each is tried "
    "again for up to POWERCONTEXT_DB_CONNECT_WAIT); the pool counts its own in "
    "powercontext_db_pool_errors.",
)

# psycopg_pool's cumulative statistics (``pop_stats`` resets them) and our counters.
_POOL_STATS = {
    "requests_queued": (DB_POOL_WAITS, 1.0),
    "requests_wait_ms": (DB_POOL_WAIT_SECONDS, 0.001),
    "requests_errors": (DB_POOL_ERRORS, 1.0),
    "connections_errors": (DB_POOL_ERRORS, 1.0),
    "connections_lost": (DB_POOL_ERRORS, 1.0),
    "returns_bad": (DB_POOL_ERRORS, 1.0),
}
POOL_STATS_EVERY_SECONDS = 1.0
_pool_stats_read_at = 0.0


def request_observed(route: str, method: str, status: int, seconds: float) -> None:
    REQUEST_SECONDS.labels(route, method, str(status)).observe(seconds)
    _pool_stats_collect()


def capture_counted(outcome: str) -> None:
    CAPTURES.labels(outcome).inc()


def rate_limited(limit: str) -> None:
    RATE_LIMITED.labels(limit).inc()


def rate_limit_backend_failed() -> None:
    RATE_LIMIT_BACKEND_FAILURES.inc()


def db_connect_failed() -> None:
    DB_CONNECT_FAILURES.inc()


def _pool_stats_collect() -> None:
    """Move the pool's statistics into the counters, at most once a second."""
    global _pool_stats_read_at
    now = time.monotonic()
    if now - _pool_stats_read_at < POOL_STATS_EVERY_SECONDS:
        return
    _pool_stats_read_at = now
    from django.db import connections  # here: this module must load without Django

    for alias in connections:
        # The PostgreSQL backend's pool for the alias, one per process; None
        # without one (no ``pool`` option), absent on SQLite.
        pool = getattr(connections[alias], "pool", None)
        if pool is None:
            continue
        stats: dict[str, Any] = pool.pop_stats()
        for key, (counter, scale) in _POOL_STATS.items():
            value = stats.get(key, 0)
            if value:
                counter.inc(value * scale)


def forget_dead_workers() -> None:
    """Mark dead every process whose samples are in the metrics directory and that
    no longer runs: its gauges go, its counters stay in the sums.

    granian has no hook for a worker's death (gunicorn's ``child_exit`` did this);
    the worker that replaces a dead one calls this as it starts. A pid already
    reused by another process keeps its files until that one is gone too.
    """
    directory = os.environ.get(MULTIPROC_DIR_VARIABLE)
    if not directory:
        return
    for pid in sorted(_sample_file_pids(Path(directory))):
        if not _process_runs(pid):
            multiprocess.mark_process_dead(pid, directory)


def _sample_file_pids(directory: Path) -> set[int]:
    """The pids prometheus_client names its files after (``counter_1234.db``,
    ``gauge_livesum_1234.db``)."""
    pids = set()
    for path in directory.glob("*.db"):
        _kind, _, pid = path.stem.rpartition("_")
        if pid.isdigit():
            pids.add(int(pid))
    return pids


def _process_runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: not one of ours, but not gone
    return True


def exposition() -> bytes:
    """Every metric of every worker, in Prometheus' text format."""
    if os.environ.get(MULTIPROC_DIR_VARIABLE):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)
    return generate_latest(REGISTRY)
