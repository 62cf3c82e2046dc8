"""Run one wrk workload against one server and record the result as JSON.

Called by bench/run.sh once per (server, workload, concurrency). For each run it
creates a fresh scope on the target (so every run starts from an empty journal),
captures the replayed note first for the "replays" workload, runs an unrecorded
warm-up, then the measured wrk run (bench/wrkrun.py). Around the measured run it
samples where the machine's CPU went (bench/procstats.py: wrk itself, the server's
process tree, PostgreSQL, Redis, anything else), because load generator and server
share two cores: the result says how much of a core wrk used, so a reader can see
it was not the bottleneck. With ``--redis-url`` it also counts the scripts Redis
ran (our rate limiter's decisions). Every status is counted; the record says how
many responses were not 2xx and how many were 429, warm-up included.

Usage:
  drive.py --server ours --base-url http://127.0.0.1:18801 --token T \
      --server-pid 1234 --workload working_notes --connections 16 --out FILE.json \
      [--redis-url redis://127.0.0.1:6379/14]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path

from apiclient import http_json, replay_body, scope_create
from wrkrun import WRK_DIR, Target, measured_run, summarize


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
    "mcp_working_notes": Workload(
        "mcp_working_notes.lua", 200, "new working notes through MCP tools/call"
    ),
}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--server",
        required=True,
        help="ref, baseline, ours, ours_limits_on/_off/_exact",
    )
    parser.add_argument(
        "--limit-lease",
        type=int,
        default=1,
        help="requests one Redis decision may take on this server (1: every one asks)",
    )
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
        "--redis-url", default="", help="count this Redis's scripts and CPU"
    )
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
    return parser.parse_args()


def main() -> None:
    args = parse_args()
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

    result, accounting = measured_run(
        target=Target(args.base_url, args.server_pid, args.redis_url),
        script=workload.script,
        threads=args.threads,
        connections=args.connections,
        env=env,
        duration=args.duration,
        warmup=args.warmup,
        quiet_below=args.quiet_below,
        quiet_patience=args.quiet_patience,
    )
    record = {
        "server": args.server,
        "workload": args.workload,
        "description": workload.description,
        "connections": args.connections,
        "wrk_threads": args.threads,
        "scope_id": scope_id,
        "expected_status": workload.expect,
        "limit_lease": args.limit_lease,
        **summarize(result, {workload.expect}),
        **accounting,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    cpu, per_request = record["cpu_cores"], record["cpu_ms_per_request"]
    print(
        f"  {label:<34} {record['rps']:>8.1f} req/s  p50 {record['p50_ms']:7.1f} ms"
        f"  p99 {record['p99_ms']:7.1f} ms  errors {record['errors']}"
        f"  non-2xx {record['non_2xx']}"
        f"  cpu: server {cpu['server']:.2f} pg {cpu['postgres']:.2f}"
        f" redis {cpu['redis']:.2f} wrk {cpu['wrk']:.2f} other {cpu['other']:.2f}"
        f"  ms cpu/req: server {per_request['server']:.2f}"
        f" pg {per_request['postgres']:.2f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
