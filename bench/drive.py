"""Run one wrk workload against one server and record the result as JSON.

Called by bench/run.sh once per (server, workload, concurrency). For each run it
creates a fresh scope on the target (so every run starts from an empty journal),
captures the replayed note first for the "replays" workload, runs an unrecorded
warm-up, then the measured wrk run. Around the measured run it samples where the
machine's CPU went (wrk itself, the server's process tree, PostgreSQL, anything
else), because load generator and server share two cores: the result says how
much of a core wrk used, so a reader can see it was not the bottleneck.

Usage:
  drive.py --server ours --base-url http://127.0.0.1:18801 --token T \
      --server-pid 1234 --workload working_notes --connections 16 --out FILE.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

WRK_DIR = Path(__file__).resolve().parent / "wrk"
CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Workload:
    script: str
    expect: int
    description: str


WORKLOADS = {
    "working_notes": Workload("working_notes.lua", 202, "new working notes"),
    "replays": Workload("replays.lua", 202, "exact replays of one note"),
    "content": Workload("content.lua", 202, "new content captures"),
    "scope_get": Workload("scope_get.lua", 200, "GET one scope"),
}


def http_json(base_url: str, token: str, method: str, path: str, body: bytes | None):
    """One request with the stdlib client; returns (status, parsed body).

    The body is parsed as JSON when the answer is a success with a JSON body, and
    returned as text otherwise (errors, ``text/plain`` answers such as the fold).
    """
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(
        base_url + path, data=body, headers=headers, method=method
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=30) as response:
            raw = response.read().decode("utf-8", "replace")
            if response.headers.get_content_type() == "application/json":
                return response.status, json.loads(raw)
            return response.status, raw
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")


def scope_create(base_url: str, token: str, label: str) -> str:
    body = json.dumps(
        {
            "title": f"bench {label}",
            "summary": "Scope created by bench/drive.py for one measured run.",
            "idempotency_key": f"bench-{label}-{secrets.token_hex(8)}",
        }
    ).encode()
    status, answer = http_json(base_url, token, "POST", "/v1/scopes", body)
    if status != 201:
        sys.exit(f"drive.py: creating a scope answered {status}: {answer}")
    return answer["scope_id"]


def replay_body(scope_id: str, nonce: str) -> bytes:
    return json.dumps(
        {
            "scope_id": scope_id,
            "source_id": f"wn-replay-{nonce}",
            "content": f"Replayed note of run {nonce}: the same identity and value.",
            "session_id": "bench-session-replay",
            "note_kind": "validation",
        }
    ).encode()


# --- CPU accounting -------------------------------------------------------------


def _proc_stats() -> dict[int, tuple[int, str, int]]:
    """pid -> (ppid, comm, CPU ticks) for every live process.

    The ticks include those of exited children the process has reaped (cutime,
    cstime), so a recycled gunicorn worker or a closed PostgreSQL backend moves
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


def _machine_ticks() -> tuple[int, int]:
    """(busy, idle) ticks of all CPUs since boot, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return sum(values[:8]) - idle, idle


def cpu_snapshot(server_pid: int) -> dict[str, int]:
    """CPU ticks so far of the server's process tree, of PostgreSQL, and in total."""
    stats = _proc_stats()
    tree = {server_pid}
    grew = True
    while grew:  # add children until the tree stops growing
        before = len(tree)
        tree |= {pid for pid, (ppid, _, _) in stats.items() if ppid in tree}
        grew = len(tree) != before
    busy, idle = _machine_ticks()
    return {
        "server": sum(stats[pid][2] for pid in tree if pid in stats),
        "postgres": sum(t for _, comm, t in stats.values() if comm == "postgres"),
        "busy": busy,
        "idle": idle,
    }


def cpu_breakdown(before: dict, after: dict, wrk_seconds: float, wall: float) -> dict:
    """Cores used during the run by each group; 'other' is everything else."""
    cores = {
        key: (after[key] - before[key]) / CLK_TCK / wall
        for key in ("server", "postgres", "busy")
    }
    cores["wrk"] = wrk_seconds / wall
    cores["other"] = max(
        0.0, cores["busy"] - cores["server"] - cores["postgres"] - cores["wrk"]
    )
    return {key: round(value, 3) for key, value in cores.items()}


def wait_for_quiet(limit_cores: float, patience: float) -> float:
    """Wait until the whole machine uses under ``limit_cores`` over 2 s.

    Other people's processes share these two cores; a run started while they
    are busy measures them as much as the server. Gives up after ``patience``
    seconds and returns the last load seen (the report flags noisy runs).
    """
    deadline = time.monotonic() + patience
    while True:
        busy_before, _ = _machine_ticks()
        time.sleep(2)
        busy_after, _ = _machine_ticks()
        load = (busy_after - busy_before) / CLK_TCK / 2
        if load < limit_cores or time.monotonic() >= deadline:
            return load


# --- wrk -------------------------------------------------------------------------


def run_wrk(args, workload: Workload, env: dict, duration: str) -> tuple[dict, float]:
    """Run wrk once; returns (its BENCH_JSON result, wrk's own CPU seconds)."""
    command = [
        "wrk",
        f"-t{args.threads}",
        f"-c{args.connections}",
        f"-d{duration}",
        "--timeout",
        "10s",
        "-s",
        str(WRK_DIR / workload.script),
        args.base_url,
    ]
    # wrk is our only child process: RUSAGE_CHILDREN grows by exactly its CPU time.
    usage_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    process = subprocess.run(command, env=env, capture_output=True, text=True)
    usage_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if process.returncode != 0:
        output = process.stdout + process.stderr
        sys.exit(f"drive.py: wrk failed ({process.returncode}):\n{output}")
    lines = [
        line for line in process.stdout.splitlines() if line.startswith("BENCH_JSON ")
    ]
    if not lines:
        sys.exit(f"drive.py: no BENCH_JSON line:\n{process.stdout}\n{process.stderr}")
    cpu = (usage_after.ru_utime - usage_before.ru_utime) + (
        usage_after.ru_stime - usage_before.ru_stime
    )
    return json.loads(lines[-1][len("BENCH_JSON ") :]), cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", required=True, help="label: ours or ref")
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--token", default="")
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--workload", choices=sorted(WORKLOADS), required=True)
    parser.add_argument("--connections", type=int, required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--duration", default="15s")
    parser.add_argument("--warmup", default="3s")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--quiet-below",
        type=float,
        default=0.3,
        help="start the measured run once the machine uses fewer cores than this",
    )
    parser.add_argument(
        "--quiet-patience",
        type=float,
        default=60,
        help="seconds to wait for that before running anyway",
    )
    args = parser.parse_args()

    workload = WORKLOADS[args.workload]
    nonce = secrets.token_hex(6)
    label = f"{args.server}-{args.workload}-c{args.connections}"
    scope_id = scope_create(args.base_url, args.token, label)
    env = dict(
        os.environ,
        BENCH_WRK_DIR=str(WRK_DIR),
        BENCH_SCOPE=scope_id,
        BENCH_TOKEN=args.token,
        BENCH_NONCE=nonce,
        BENCH_EXPECT=str(workload.expect),
    )
    if args.workload == "replays":
        body = replay_body(scope_id, nonce)
        status, answer = http_json(
            args.base_url, args.token, "POST", "/v1/sources/working-notes", body
        )
        if status != 202:
            sys.exit(
                f"drive.py: the note to replay was not captured: {status} {answer}"
            )
        env["BENCH_REPLAY_BODY"] = body.decode()
    if args.warmup not in ("", "0", "0s"):
        run_wrk(args, workload, dict(env, BENCH_NONCE=nonce + "w"), args.warmup)

    idle_load = wait_for_quiet(args.quiet_below, args.quiet_patience)
    if idle_load >= args.quiet_below:
        print(
            f"  (machine still busy before the run: {idle_load:.2f} cores in use)",
            flush=True,
        )
    before = cpu_snapshot(args.server_pid)
    started = time.monotonic()
    result, wrk_cpu = run_wrk(args, workload, env, args.duration)
    wall = time.monotonic() - started
    after = cpu_snapshot(args.server_pid)

    seconds = result["duration_us"] / 1e6
    unexpected = sum(
        count
        for status, count in result["statuses"].items()
        if int(status) != workload.expect
    )
    socket_errors = sum(
        result["errors"][key] for key in ("connect", "read", "write", "timeout")
    )
    record = {
        "server": args.server,
        "workload": args.workload,
        "description": workload.description,
        "connections": args.connections,
        "wrk_threads": args.threads,
        "scope_id": scope_id,
        "requests": result["requests"],
        "seconds": round(seconds, 3),
        "rps": round(result["requests"] / seconds, 1),
        "p50_ms": result["latency_us"]["p50"] / 1000,
        "p90_ms": result["latency_us"]["p90"] / 1000,
        "p99_ms": result["latency_us"]["p99"] / 1000,
        "max_ms": result["latency_us"]["max"] / 1000,
        "errors": unexpected + socket_errors,
        "expected_status": workload.expect,
        "statuses": result["statuses"],
        "socket_errors": result["errors"],
        "replayed_header": result["replayed_header"],
        "unexpected_body": result["unexpected_body"],
        "cpu_cores": cpu_breakdown(before, after, wrk_cpu, wall),
        "busy_cores_before_run": round(idle_load, 3),
        # CPU time per request is less sensitive to other load than req/s.
        "cpu_ms_per_request": {
            group: round(cores * wall * 1000 / max(1, result["requests"]), 3)
            for group, cores in cpu_breakdown(before, after, wrk_cpu, wall).items()
            if group in ("server", "postgres", "wrk")
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    cpu = record["cpu_cores"]
    print(
        f"  {label:<28} {record['rps']:>8.1f} req/s  p50 {record['p50_ms']:7.1f} ms"
        f"  p99 {record['p99_ms']:7.1f} ms  errors {record['errors']}"
        f"  cpu: server {cpu['server']:.2f} pg {cpu['postgres']:.2f}"
        f" wrk {cpu['wrk']:.2f} other {cpu['other']:.2f}"
        f"  ms cpu/req: server {record['cpu_ms_per_request']['server']:.2f}"
        f" pg {record['cpu_ms_per_request']['postgres']:.2f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
