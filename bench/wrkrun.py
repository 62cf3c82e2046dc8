"""One measured wrk run, as bench/drive.py and bench/scale.py both make them.

``measured_run`` runs an unrecorded warm-up, waits for the machine to be quiet,
then runs wrk with a CPU snapshot (bench/procstats.py) on each side and, when the
run uses Redis, the count of scripts Redis ran (bench/redisstats.py).
``summarize`` turns wrk's ``BENCH_JSON`` line (bench/wrk/common.lua) into the
fields every run record has: req/s, latency percentiles, the status counts and
how many responses were not the expected status, not 2xx, or 429.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import redisstats
from procstats import cpu_breakdown, cpu_ms_per_request, cpu_snapshot, wait_for_quiet

WRK_DIR = Path(__file__).resolve().parent / "wrk"
SOCKET_ERRORS = ("connect", "read", "write", "timeout")


@dataclass(frozen=True)
class Target:
    """The server under load: where it listens, its master PID, its Redis if any."""

    base_url: str
    server_pid: int
    redis_url: str = ""


def run_wrk(
    target: Target,
    script: str,
    threads: int,
    connections: int,
    env: dict,
    duration: str,
) -> tuple[dict, float]:
    """Run wrk once; returns (its BENCH_JSON result, wrk's own CPU seconds)."""
    command = [
        "wrk",
        f"-t{threads}",
        f"-c{connections}",
        f"-d{duration}",
        "--timeout",
        "10s",
        "-s",
        str(WRK_DIR / script),
        target.base_url,
    ]
    # wrk is our only child process: RUSAGE_CHILDREN grows by exactly its CPU time.
    usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = subprocess.run(command, env=env, capture_output=True, text=True)
    usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode != 0:
        output = process.stdout + process.stderr
        sys.exit(f"wrk failed ({process.returncode}):\n{output}")
    lines = [
        line for line in process.stdout.splitlines() if line.startswith("BENCH_JSON ")
    ]
    if not lines:
        sys.exit(f"wrk printed no BENCH_JSON line:\n{process.stdout}\n{process.stderr}")
    cpu = (usage_after.ru_utime - usage_before.ru_utime) + (
        usage_after.ru_stime - usage_before.ru_stime
    )
    return json.loads(lines[-1][len("BENCH_JSON ") :]), cpu


def non_2xx(statuses: dict) -> int:
    return sum(count for status, count in statuses.items() if int(status) // 100 != 2)


def summarize(result: dict, accepted: set[int]) -> dict:
    """The run's figures from wrk's result; ``errors`` counts socket errors and
    every response whose status is not in ``accepted``."""
    seconds = result["duration_us"] / 1e6
    unexpected = sum(
        count
        for status, count in result["statuses"].items()
        if int(status) not in accepted
    )
    return {
        "requests": result["requests"],
        "seconds": round(seconds, 3),
        "rps": round(result["requests"] / seconds, 1),
        "p50_ms": result["latency_us"]["p50"] / 1000,
        "p90_ms": result["latency_us"]["p90"] / 1000,
        "p99_ms": result["latency_us"]["p99"] / 1000,
        "max_ms": result["latency_us"]["max"] / 1000,
        "errors": unexpected + sum(result["errors"][key] for key in SOCKET_ERRORS),
        "statuses": result["statuses"],
        "non_2xx": non_2xx(result["statuses"]),
        "rate_limited": int(result["statuses"].get("429", 0)),
        "socket_errors": result["errors"],
        "replayed_header": result["replayed_header"],
        "unexpected_body": result["unexpected_body"],
    }


def measured_run(
    *,
    target: Target,
    script: str,
    threads: int,
    connections: int,
    env: dict,
    duration: str,
    warmup: str,
    quiet_below: float,
    quiet_patience: float,
) -> tuple[dict, dict]:
    """Warm up, wait for quiet, run wrk measured; returns (wrk's result, the CPU
    and Redis accounting of the measured run). ``env`` holds BENCH_NONCE; the
    warm-up uses that nonce with a "w" appended, so its ids never collide."""
    warmup_statuses: dict = {}
    if warmup not in ("", "0", "0s"):
        warm_env = dict(env, BENCH_NONCE=env["BENCH_NONCE"] + "w")
        warm, _ = run_wrk(target, script, threads, connections, warm_env, warmup)
        warmup_statuses = warm["statuses"]
    busy_before = wait_for_quiet(quiet_below, quiet_patience)
    if busy_before >= quiet_below:
        print(
            f"  (machine still busy before the run: {busy_before:.2f} cores in use)",
            flush=True,
        )
    redis_client = redisstats.connect(target.redis_url) if target.redis_url else None
    redis_pid = redisstats.process_id(redis_client) if redis_client else None
    scripts_before = redisstats.scripts_run(redis_client) if redis_client else 0
    before = cpu_snapshot(target.server_pid, redis_pid)
    started = time.monotonic()
    result, wrk_cpu = run_wrk(target, script, threads, connections, env, duration)
    wall = time.monotonic() - started
    after = cpu_snapshot(target.server_pid, redis_pid)
    cores = cpu_breakdown(before, after, wrk_cpu, wall)
    accounting = {
        "cpu_cores": cores,
        "busy_cores_before_run": round(busy_before, 3),
        # CPU time per request is less sensitive to other load than req/s.
        "cpu_ms_per_request": cpu_ms_per_request(cores, wall, result["requests"]),
        "wrk_cpu_seconds": round(wrk_cpu, 3),
        "warmup_statuses": warmup_statuses,
        "warmup_non_2xx": non_2xx(warmup_statuses),
    }
    if redis_client is not None:
        scripts_after = redisstats.scripts_run(redis_client)
        accounting["redis_scripts"] = scripts_after - scripts_before
    return result, accounting
