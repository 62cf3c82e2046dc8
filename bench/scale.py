"""Scale phase of `make bench`: our latencies on one scope at 10k, then 1M Sources.

bench/run.sh seeds one scope with ``manage.py seed_sources`` in stages (10,000
Sources, then up to 1,000,000), runs ``VACUUM ANALYZE``, and after each stage calls
``scale.py measure``. For every operation below, ``measure`` writes a file of
prepared requests that touch random rows of the scope (random Sources, sessions and
positions, sampled from the database; bench/wrk/requests.lua cycles through the
file), checks that the first request of each file gets the answer the operation
expects, and runs wrk at each concurrency: req/s, p50, p99, errors, CPU split.
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
import random
import secrets
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import quote

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from drive import (
    WRK_DIR,
    Workload,
    cpu_breakdown,
    cpu_snapshot,
    http_json,
    run_wrk,
    wait_for_quiet,
)

# Distinct requests per operation file: enough that the rows touched do not all
# sit in a few cached pages at 1M Sources.
SAMPLE = 2000
EVIDENCE_REFS = 256
EVIDENCE_BODIES = 100
ENVELOPE_SESSIONS = 64
TARGET_P50_RATIO = 2.0
TARGET_EVIDENCE_P50_MS = 50.0


@dataclass(frozen=True)
class Operation:
    name: str
    description: str
    expect: str  # accepted status codes, comma separated
    script: str = "requests.lua"


OPERATIONS = [
    Operation("get", "get one Source (random)", "200"),
    Operation("list", "list, first page of 50", "200"),
    Operation("audit_session", "audit filtered by session (random), 50", "200"),
    Operation("window", "generation window page at a random position", "200"),
    Operation("evidence", f"evidence resolution of {EVIDENCE_REFS} refs", "200"),
    Operation("envelope_put", "envelope PUT (host replace)", "200,201"),
    Operation("envelope_patch", "envelope PATCH (worker overlay)", "200,201"),
    Operation("envelope_get", "envelope GET", "200"),
    Operation("fold", "working notes fold", "200"),
    Operation("replay", "replay of a seeded note (random)", "202"),
    Operation("capture", "capture a new working note", "202", "working_notes.lua"),
]
BY_NAME = {operation.name: operation for operation in OPERATIONS}


# --- request files ----------------------------------------------------------------


def sample_scope(db_url: str, scope_id: str) -> SimpleNamespace:
    """Random Sources, notes and sessions of the scope, and its head position."""
    with psycopg.connect(db_url) as connection, connection.cursor() as cursor:
        cursor.execute(
            "SELECT last_position FROM sources_sourcejournalhead WHERE scope_id = %s",
            (scope_id,),
        )
        head = cursor.fetchone()[0]
        cursor.execute("SELECT count(*) FROM sources_contentsource")
        # Sampling the table's pages needs no knowledge of how it was seeded;
        # about 4 x SAMPLE rows, a quarter of them notes with the default seed.
        percent = min(100.0, 100.0 * SAMPLE * 4 / max(1, cursor.fetchone()[0]))
        cursor.execute(
            "SELECT source_id FROM sources_contentsource TABLESAMPLE SYSTEM (%s)"
            " WHERE scope_id = %s",
            (percent, scope_id),
        )
        source_ids = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            "SELECT source_id, content, session_id, note_kind"
            " FROM sources_contentsource TABLESAMPLE SYSTEM (%s)"
            " WHERE scope_id = %s AND is_working_note AND expires_at IS NULL",
            (percent, scope_id),
        )
        # content holds the canonical JSON text of the value; a replay sends the value.
        notes = [
            (source_id, json.loads(content), session_id, note_kind)
            for source_id, content, session_id, note_kind in cursor.fetchall()
        ]
        cursor.execute(
            "SELECT DISTINCT session_id FROM sources_contentsource"
            " WHERE scope_id = %s AND session_id IS NOT NULL"
            " AND position <= 20000",
            (scope_id,),
        )
        sessions = [row[0] for row in cursor.fetchall()]
    if not source_ids or not notes or not sessions:
        sys.exit(f"scale.py: scope {scope_id} holds too few Sources to sample")
    rng = random.Random(head)
    return SimpleNamespace(
        head=head,
        source_ids=rng.sample(source_ids, min(SAMPLE, len(source_ids))),
        notes=rng.sample(notes, min(SAMPLE, len(notes))),
        sessions=sessions,
        rng=rng,
    )


def request_lines(operation: str, scope_id: str, sample: SimpleNamespace) -> list:
    """(method, path, body or None) for every prepared request of an operation."""
    base = f"/v1/scopes/{scope_id}"
    rng = sample.rng
    envelopes = [
        f"{base}/sessions/bench-scale-{index}/envelope"
        for index in range(ENVELOPE_SESSIONS)
    ]
    if operation == "get":
        return [
            ("GET", f"{base}/sources/content/{quote(source_id, safe='')}", None)
            for source_id in sample.source_ids
        ]
    if operation == "list":
        return [("GET", f"{base}/sources?limit=50", None)]
    if operation == "audit_session":
        return [
            ("GET", f"{base}/source-audit?session_id={quote(session)}&limit=50", None)
            for session in sample.sessions
        ]
    if operation == "window":
        return [
            (
                "GET",
                f"{base}/sources/window?after={rng.randrange(sample.head)}&limit=50",
                None,
            )
            for _ in range(SAMPLE)
        ]
    if operation == "evidence":
        return [
            (
                "POST",
                f"{base}/evidence/resolve",
                {
                    "purpose": "handoff",
                    "refs": [
                        {"name": "content", "source_id": source_id}
                        for source_id in rng.sample(sample.source_ids, EVIDENCE_REFS)
                    ],
                },
            )
            for _ in range(EVIDENCE_BODIES)
        ]
    if operation == "envelope_put":
        # Two values per session, alternating: nearly every PUT is a real write.
        return [
            ("PUT", path, {"meta": {"selectedModel": f"model-{turn}", "x-ui": turn}})
            for turn in ("a", "b")
            for path in envelopes
        ]
    if operation == "envelope_patch":
        return [
            ("PATCH", path, {"meta": {"turnStatus": status, "turnCursor": cursor}})
            for cursor, status in enumerate(("running", "completed"))
            for path in envelopes
        ]
    if operation == "envelope_get":
        return [("GET", path, None) for path in envelopes]
    if operation == "fold":
        return [
            ("GET", path[: -len("envelope")] + "working-notes/fold", None)
            for path in envelopes
        ]
    if operation == "replay":
        return [
            (
                "POST",
                "/v1/sources/working-notes",
                {
                    "scope_id": scope_id,
                    "source_id": source_id,
                    "content": content,
                    "session_id": session_id,
                    "note_kind": note_kind,
                },
            )
            for source_id, content, session_id, note_kind in sample.notes
        ]
    raise ValueError(operation)


def write_request_file(path: Path, lines: list) -> None:
    with path.open("w") as file:
        for method, url, body in lines:
            encoded = "" if body is None else "\t" + json.dumps(body)
            file.write(f"{method}\t{url}{encoded}\n")


def prepare_envelopes(base_url: str, token: str, scope_id: str) -> None:
    """Give every benchmark session working notes, so fold answers 200 not 204."""
    for index in range(ENVELOPE_SESSIONS):
        path = f"/v1/scopes/{scope_id}/sessions/bench-scale-{index}/envelope"
        body = {"meta": {"workingNotes": f"Notes of benchmark session {index}."}}
        status, answer = http_json(
            base_url, token, "PATCH", path, json.dumps(body).encode()
        )
        if status not in (200, 201):
            sys.exit(f"scale.py: preparing {path} answered {status}: {answer}")


def check_first(base_url: str, token: str, operation: Operation, line) -> None:
    """Send the file's first request once; stop if the answer is not the expected."""
    method, path, body = line
    encoded = None if body is None else json.dumps(body).encode()
    status, answer = http_json(base_url, token, method, path, encoded)
    if str(status) not in operation.expect.split(","):
        sys.exit(f"scale.py: {operation.name}: {method} {path} -> {status} {answer}")
    if operation.name == "evidence":
        items = answer["items"]
        unavailable = [item for item in items if item["status"] != "available"]
        if unavailable:
            sys.exit(f"scale.py: evidence refs did not resolve: {unavailable[:3]}")


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
            nonce = secrets.token_hex(6)
            run = SimpleNamespace(
                threads=1, connections=connections, base_url=args.base_url
            )
            workload = Workload(operation.script, 0, operation.description)
            if args.warmup not in ("", "0", "0s"):
                run_wrk(run, workload, dict(env, BENCH_NONCE=nonce + "w"), args.warmup)
            wait_for_quiet(0.3, args.quiet_patience)
            before = cpu_snapshot(args.server_pid)
            started = time.monotonic()
            result, wrk_cpu = run_wrk(
                run, workload, dict(env, BENCH_NONCE=nonce), args.duration
            )
            wall = time.monotonic() - started
            after = cpu_snapshot(args.server_pid)
            record = _record(args, operation, connections, result, wrk_cpu)
            record["cpu_cores"] = cpu_breakdown(before, after, wrk_cpu, wall)
            out = args.out_dir / f"scale-{args.stage}-{name}-c{connections}.json"
            out.write_text(json.dumps(record, indent=2) + "\n")
            print(
                f"  {args.stage:>8} {name:<15} c={connections:<3}"
                f" {record['rps']:>8.1f} req/s  p50 {record['p50_ms']:7.2f} ms"
                f"  p99 {record['p99_ms']:7.2f} ms  errors {record['errors']}",
                flush=True,
            )


def _record(args, operation: Operation, connections: int, result: dict, wrk_cpu):
    accepted = {int(code) for code in operation.expect.split(",")}
    unexpected = sum(
        count
        for status, count in result["statuses"].items()
        if int(status) not in accepted
    )
    socket_errors = sum(
        result["errors"][key] for key in ("connect", "read", "write", "timeout")
    )
    seconds = result["duration_us"] / 1e6
    return {
        "stage": args.stage,
        "operation": operation.name,
        "description": operation.description,
        "connections": connections,
        "requests": result["requests"],
        "rps": round(result["requests"] / seconds, 1),
        "p50_ms": result["latency_us"]["p50"] / 1000,
        "p90_ms": result["latency_us"]["p90"] / 1000,
        "p99_ms": result["latency_us"]["p99"] / 1000,
        "errors": unexpected + socket_errors,
        "statuses": result["statuses"],
        "replayed_header": result["replayed_header"],
        "unexpected_body": result["unexpected_body"],
        "wrk_cpu_seconds": round(wrk_cpu, 3),
    }


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
