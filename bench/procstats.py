"""Where the machine's CPU went during one measured run, from /proc.

Load generator, server, PostgreSQL and Redis share the machine's cores, so every
measured run (bench/drive.py, bench/scale.py) samples CPU ticks before and after:
the server's process tree, PostgreSQL (every process named ``postgres``), the
Redis server (by its PID, when the run uses one), wrk (its rusage, measured by the
caller) and the machine in total. ``cpu_breakdown`` turns two snapshots into cores
used per group, "other" being everything else - other people's processes, which
the report flags. CPU time per request is less sensitive to other load than req/s.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")
# Groups whose CPU per request is recorded (wrk's is the load generator's cost).
PER_REQUEST_GROUPS = ("server", "postgres", "redis", "wrk")


def _proc_stats() -> dict[int, tuple[int, str, int]]:
    """pid -> (ppid, comm, CPU ticks) for every live process.

    The ticks include those of exited children the process has reaped (cutime,
    cstime), so a replaced granian worker or a closed PostgreSQL backend moves
    its time to its parent instead of vanishing from the group's total.
    """
    stats = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        comm = raw[raw.index("(") + 1 : raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2 :].split()
        ticks = sum(int(value) for value in fields[11:15])  # utime stime cutime cstime
        stats[int(entry)] = (int(fields[1]), comm, ticks)
    return stats


def machine_ticks() -> tuple[int, int]:
    """(busy, idle) ticks of all CPUs since boot, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return sum(values[:8]) - idle, idle


def cpu_snapshot(server_pid: int, redis_pid: int | None = None) -> dict[str, int]:
    """CPU ticks so far of the server's process tree, PostgreSQL, Redis, in total."""
    stats = _proc_stats()
    tree = {server_pid}
    grew = True
    while grew:  # add children until the tree stops growing
        before = len(tree)
        tree |= {pid for pid, (ppid, _, _) in stats.items() if ppid in tree}
        grew = len(tree) != before
    busy, idle = machine_ticks()
    return {
        "server": sum(stats[pid][2] for pid in tree if pid in stats),
        "postgres": sum(t for _, comm, t in stats.values() if comm == "postgres"),
        "redis": stats[redis_pid][2] if redis_pid in stats else 0,
        "busy": busy,
        "idle": idle,
    }


def cpu_breakdown(before: dict, after: dict, wrk_seconds: float, wall: float) -> dict:
    """Cores used during the run by each group; 'other' is everything else."""
    cores = {
        key: (after[key] - before[key]) / CLK_TCK / wall
        for key in ("server", "postgres", "redis", "busy")
    }
    cores["wrk"] = wrk_seconds / wall
    cores["other"] = max(
        0.0,
        cores["busy"]
        - cores["server"]
        - cores["postgres"]
        - cores["redis"]
        - cores["wrk"],
    )
    return {key: round(value, 3) for key, value in cores.items()}


def cpu_ms_per_request(cores: dict, wall: float, requests: int) -> dict[str, float]:
    """Milliseconds of CPU per request of each group in ``PER_REQUEST_GROUPS``."""
    return {
        group: round(cores[group] * wall * 1000 / max(1, requests), 3)
        for group in PER_REQUEST_GROUPS
    }


def wait_for_quiet(limit_cores: float, patience: float) -> float:
    """Wait until the whole machine uses under ``limit_cores`` over 2 s.

    Other people's processes share these cores; a run started while they are busy
    measures them as much as the server. Gives up after ``patience`` seconds and
    returns the last load seen (the report flags noisy runs).
    """
    deadline = time.monotonic() + patience
    while True:
        busy_before, _ = machine_ticks()
        time.sleep(2)
        busy_after, _ = machine_ticks()
        load = (busy_after - busy_before) / CLK_TCK / 2
        if load < limit_cores or time.monotonic() >= deadline:
            return load
