"""A consistency campaign: the service under faults, its history checked.

``python -m tests.consistency.campaign --duration 1800`` (``make test-consistency
DURATION=1800``): a private PostgreSQL 15 cluster, the fault proxy in front of it,
our service under granian with production settings on the proxy, 16 clients
recording a history while the nemesis restarts PostgreSQL (``-m fast`` and
``-m immediate``), kills a granian worker with ``kill -9`` and makes the proxy
reset, stall and drop the service's database connections. Then every key's
history is checked for linearizability (tests/consistency/checker.py).

Prints one line - operations, faults injected, keys checked, anomalies - and
writes the history to ``var/consistency/history-<stamp>.jsonl`` and, for each
anomaly, the smallest failing window of its key beside it. PgBouncer is not in
the path (the service's own pool talks to PostgreSQL through the proxy).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.consistency import checker
from tests.consistency.faults import FaultProxy, Nemesis
from tests.consistency.workload import Recorder, Workload
from tests.robustness.conftest import PRODUCTION, production_env
from tests.robustness.processes import (
    ROOT,
    LaunchedServer,
    PostgresCluster,
    database_create,
    manage,
    mint_token,
    service_env,
    wait_until,
)

# A request waits this long for a new database connection before its 503, as in the
# robustness fault tests: an outage costs seconds, not the default 10 s.
CONNECT_WAIT = "3"


@dataclass
class Result:
    seconds: float
    report: checker.Report
    faults: dict[str, int]
    fault_failures: list[str]
    types: Counter[str]
    history: Path
    server_errors: int = 0
    windows: list[Path] = field(default_factory=list)

    def line(self) -> str:
        return (
            f"consistency: {self.report.operations} operations "
            f"({self.types['ok']} ok, {self.types['fail']} fail, "
            f"{self.types['info']} info) in {self.seconds:.0f} s, "
            f"{sum(self.faults.values())} faults injected "
            f"({', '.join(f'{k} {v}' for k, v in sorted(self.faults.items()))}), "
            f"{self.report.keys} keys checked, "
            f"{len(self.report.anomalies)} anomalies, "
            f"{len(self.report.unknown)} undecided, "
            f"{self.server_errors} answers 5xx other than 503; history {self.history}"
        )


def faults_for(
    cluster: PostgresCluster, proxy: FaultProxy, server: LaunchedServer
) -> dict[str, object]:
    def restart(mode: str) -> None:
        cluster.stop(mode)
        time.sleep(1.0)
        cluster.start()

    return {
        "postgres-restart-fast": lambda: restart("fast"),
        "proxy-reset": proxy.reset,
        "kill-9-worker": server.kill_worker,
        "proxy-stall-3s": lambda: proxy.stall(3.0),
        "postgres-restart-immediate": lambda: restart("immediate"),
        "proxy-drop-4s": lambda: proxy.drop(4.0),
    }


def run(
    seconds: float,
    out_dir: Path,
    *,
    threads: int = 16,
    interval: tuple[float, float] = (8.0, 16.0),
    seed: int | None = None,
) -> Result:
    """Run a campaign of ``seconds`` and check it; nothing is left running."""
    seed = int(time.time()) if seed is None else seed
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    history = out_dir / f"history-{stamp}.jsonl"
    with history.open("w") as stream:
        recorder = Recorder(stream)
        nemesis, elapsed = _record(recorder, seconds, threads, interval, seed, history)
    return _checked(recorder, nemesis, elapsed, history)


def _record(
    recorder: Recorder,
    seconds: float,
    threads: int,
    interval: tuple[float, float],
    seed: int,
    history: Path,
) -> tuple[Nemesis, float]:
    """Record ``seconds`` of the workload under the nemesis; the server's log is kept
    beside the history (``-server.log``): a 5xx's traceback is there."""
    work = Path(tempfile.mkdtemp(prefix="pc-consistency-"))
    cluster = PostgresCluster()
    proxy: FaultProxy | None = None
    server: LaunchedServer | None = None
    try:
        cluster.init()
        cluster.start()
        database_create(cluster.url, "consistency")
        proxy = FaultProxy(cluster.port)
        proxy.start()
        proxied = f"postgres://postgres@127.0.0.1:{proxy.port}/consistency"
        env = production_env(
            proxied, _static_root(work), POWERCONTEXT_DB_CONNECT_WAIT=CONNECT_WAIT
        )
        server = LaunchedServer(env, work, workers=2, threads=4)
        server.start()
        workload = Workload(
            server.url, mint_token(env), recorder, threads=threads, seed=seed
        )
        nemesis = Nemesis(
            recorder, faults_for(cluster, proxy, server), interval, seed=seed
        )
        started = time.monotonic()
        workload.start()
        nemesis.start()
        time.sleep(seconds)
        nemesis.stop()
        url = server.url
        wait_until(lambda: _ready(url), timeout=90, what="readiness after the faults")
        time.sleep(3)  # a few operations on a healthy service close the history
        workload.stop()
        return nemesis, time.monotonic() - started
    finally:
        if server is not None:
            server.stop()
            with contextlib.suppress(OSError):
                shutil.copy(
                    server.log_path, history.with_name(f"{history.stem}-server.log")
                )
        if proxy is not None:
            proxy.close()
        cluster.destroy()
        shutil.rmtree(work, ignore_errors=True)


def _static_root(work: Path) -> Path:
    root = work / "static"
    env = service_env("postgres://unused@127.0.0.1/unused", PRODUCTION)
    manage({**env, "DJANGO_STATIC_ROOT": str(root)}, "collectstatic", "--noinput")
    return root


def _ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health/ready", timeout=5).status_code == 200
    except httpx.TransportError:
        return False


def _checked(
    recorder: Recorder, nemesis: Nemesis, elapsed: float, history: Path
) -> Result:
    events = recorder.events
    report = checker.check(events)
    types = Counter(
        e["type"] for e in events if e["type"] != "invoke" and e["process"] != "nemesis"
    )
    types["info"] += report.operations - sum(types.values())  # never answered
    result = Result(
        elapsed, report, dict(nemesis.injected), nemesis.failures, types, history
    )
    # The contract allows 503 during an outage, never another 5xx: counted apart
    # (the checker treats every 5xx as indeterminate).
    result.server_errors = sum(
        1
        for e in events
        if e["type"] == "info"
        and isinstance(e["value"], dict)
        and e["value"].get("status", 503) != 503
    )
    for number, verdict in enumerate(report.anomalies):
        window = checker.smallest_failing_window(events, verdict.key)
        path = history.with_name(f"{history.stem}-anomaly-{number}.jsonl")
        path.write_text(checker.dumps(window))
        result.windows.append(path)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds")
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--out", type=Path, default=ROOT / "var" / "consistency")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    result = run(args.duration, args.out, threads=args.threads, seed=args.seed)
    print(result.line())
    for failure in result.fault_failures:
        print(f"fault failed: {failure}")
    for path in result.windows:
        print(f"anomaly window: {path}")
    return 1 if result.report.anomalies else 0


if __name__ == "__main__":
    sys.exit(main())
