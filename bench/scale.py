"""Scale phase of `make bench`: our latencies on one scope at 10k, then 1M Sources.

bench/run.sh seeds one scope with ``manage.py seed_sources`` in stages (10,000
Sources, then up to 1,000,000), runs ``VACUUM ANALYZE``, and after each stage calls
``scale.py measure``. For every operation of bench/scale_requests.py, ``measure``
writes a file of prepared requests that touch random rows of the scope (random
Sources, sessions and positions, sampled from the database; bench/wrk/requests.lua
cycles through the file), checks that the first request of each file gets the
answer the operation expects, and runs wrk at each concurrency (bench/wrkrun.py):
req/s, p50, p99, errors, CPU split.
Reads run first, so the 10k stage is measured on 10,000 Sources; the capture runs
that follow add their own rows. ``scale.py report`` puts the stages side by side:
the ratio of each operation's p50 at the largest stage to its p50 at the smallest
(target: at most 2) and evidence resolution's p50 at the largest (target: at most
50 ms).

Usage:
  scale.py measure --stage 10000 --base-url URL --token T --server-pid PID \
      --db-url postgres://.../pc_bench_run --scope scp_... --out-dir DIR
  scale.py report DIR
"""

from __future__ import annotations

import argparse
import json
import secrets
from pathlib import Path

from scale_requests import (
    BY_NAME,
    EVIDENCE_REFS,
    OPERATIONS,
    Operation,
    check_first,
    prepare_envelopes,
    request_lines,
    sample_scope,
    write_request_file,
)
from wrkrun import WRK_DIR, Target, measured_run, summarize

TARGET_P50_RATIO = 2.0
TARGET_EVIDENCE_P50_MS = 50.0


# --- measure ----------------------------------------------------------------------


def measure(args: argparse.Namespace) -> None:
    sample = sample_scope(args.db_url, args.scope)
    print(
        f"scale.py: stage {args.stage}: scope {args.scope}, head {sample.head},"
        f" sampled {len(sample.source_ids)} Sources, {len(sample.notes)} notes,"
        f" {len(sample.sessions)} sessions",
        flush=True,
    )
    prepare_envelopes(args.base_url, args.token, args.scope)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    names = args.operations.split() if args.operations else list(BY_NAME)
    for name in names:
        operation = BY_NAME[name]
        env = {
            "BENCH_WRK_DIR": str(WRK_DIR),
            "BENCH_SCOPE": args.scope,
            "BENCH_TOKEN": args.token,
            "BENCH_EXPECT": operation.expect,
            "PATH": "/usr/bin:/bin",
        }
        if operation.script == "requests.lua":
            lines = request_lines(name, args.scope, sample)
            request_file = args.out_dir / f"requests-{args.stage}-{name}.tsv"
            write_request_file(request_file, lines)
            check_first(args.base_url, args.token, operation, lines[0])
            env["BENCH_REQUESTS"] = str(request_file)
        for connections in args.connections:
            measure_one(args, operation, connections, env)


def measure_one(args, operation: Operation, connections: int, env: dict) -> None:
    """One measured wrk run of ``operation``; writes scale-STAGE-NAME-cN.json."""
    result, accounting = measured_run(
        target=Target(args.base_url, args.server_pid, args.redis_url),
        script=operation.script,
        threads=1,
        connections=connections,
        env=dict(env, BENCH_NONCE=secrets.token_hex(6)),
        duration=args.duration,
        warmup=args.warmup,
        quiet_below=0.3,
        quiet_patience=args.quiet_patience,
    )
    accepted = {int(code) for code in operation.expect.split(",")}
    record = {
        "stage": args.stage,
        "operation": operation.name,
        "description": operation.description,
        "connections": connections,
        **summarize(result, accepted),
        **accounting,
    }
    out = args.out_dir / f"scale-{args.stage}-{operation.name}-c{connections}.json"
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(
        f"  {args.stage:>8} {operation.name:<15} c={connections:<3}"
        f" {record['rps']:>8.1f} req/s  p50 {record['p50_ms']:7.2f} ms"
        f"  p99 {record['p99_ms']:7.2f} ms  errors {record['errors']}",
        flush=True,
    )


# --- report -----------------------------------------------------------------------


def report(args: argparse.Namespace) -> None:
    records = [
        json.loads(path.read_text()) for path in sorted(args.dir.glob("scale-*.json"))
    ]
    if not records:
        print("scale.py: no scale results in", args.dir)
        return
    stages = sorted({record["stage"] for record in records})
    small, large = stages[0], stages[-1]
    by_key = {(r["stage"], r["operation"], r["connections"]): r for r in records}
    connections = sorted({record["connections"] for record in records})
    lines = [
        f"### Scale: one scope at {small:,} and at {large:,} Sources",
        "",
        f"| operation | c | {small:,}: req/s | p50 ms | p99 ms |"
        f" {large:,}: req/s | p50 ms | p99 ms | errors | p50 ratio |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    failures = []
    for operation in OPERATIONS:
        for count in connections:
            first = by_key.get((small, operation.name, count))
            last = by_key.get((large, operation.name, count))
            if not first or not last:
                continue
            ratio = last["p50_ms"] / first["p50_ms"] if first["p50_ms"] else 0.0
            if ratio > TARGET_P50_RATIO:
                failures.append(f"{operation.name} c={count}: p50 x{ratio:.2f}")
            lines.append(
                f"| {operation.description} | {count} | {first['rps']:.1f} |"
                f" {first['p50_ms']:.2f} | {first['p99_ms']:.2f} | {last['rps']:.1f} |"
                f" {last['p50_ms']:.2f} | {last['p99_ms']:.2f} |"
                f" {first['errors'] + last['errors']} | {ratio:.2f}x |"
            )
    evidence = [
        by_key[(large, "evidence", count)]["p50_ms"]
        for count in connections
        if (large, "evidence", count) in by_key
    ]
    lines += ["", "Targets:", ""]
    lines.append(
        f"- every operation's p50 at {large:,} within {TARGET_P50_RATIO:g}x of its"
        f" p50 at {small:,}: "
        + ("met" if not failures else "NOT met: " + "; ".join(failures))
    )
    if evidence:
        best = min(evidence)
        verdict = "met" if best <= TARGET_EVIDENCE_P50_MS else "NOT met"
        lines.append(
            f"- evidence resolution of {EVIDENCE_REFS} refs, p50 at {large:,}:"
            f" {', '.join(f'{value:.2f} ms' for value in evidence)}"
            f" (c = {', '.join(map(str, connections))}); target"
            f" <= {TARGET_EVIDENCE_P50_MS:g} ms at c=1: {verdict}"
        )
    for stage in stages:
        plans = args.dir / f"plans-{stage}.md"
        if plans.exists():
            text = plans.read_text()
            scans = text.split("## Sequential scans on registry tables", 1)[-1].strip()
            lines.append(
                f"- plans at {stage:,} ({plans.name}): {scans.splitlines()[0]}"
            )
    text = "\n".join(lines) + "\n"
    (args.dir / "scale.md").write_text(text)
    print(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("measure", help="measure every operation at one stage")
    run.add_argument("--stage", type=int, required=True, help="Sources in the scope")
    run.add_argument("--base-url", required=True)
    run.add_argument("--token", required=True)
    run.add_argument("--server-pid", type=int, required=True)
    run.add_argument("--redis-url", default="", help="count this Redis's CPU")
    run.add_argument("--db-url", required=True)
    run.add_argument("--scope", required=True)
    run.add_argument("--out-dir", type=Path, required=True)
    run.add_argument(
        "--connections",
        type=lambda text: [int(v) for v in text.split()],
        default=[1, 16],
        help='e.g. "1 16"',
    )
    run.add_argument("--duration", default="10s")
    run.add_argument("--warmup", default="2s")
    run.add_argument("--quiet-patience", type=float, default=30)
    run.add_argument("--operations", default="", help="a subset, space separated")
    summary = commands.add_parser("report", help="the table of a results directory")
    summary.add_argument("dir", type=Path)
    args = parser.parse_args()
    if args.command == "measure":
        measure(args)
    else:
        report(args)


if __name__ == "__main__":
    main()
