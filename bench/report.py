"""Summarise one `make bench` run: a table per workload, ratios and target checks.

Reads the JSON files bench/drive.py and bench/pgbench.py wrote into a results
directory (the alternating rounds' under paired/, bench/paired.py), prints a table
(req/s, p50, p99, errors, ours/reference ratio, CPU split), the new-notes
comparisons of ours with rate limits on and off and of ours with the baseline
revision (CPU per request from drive.py's accounting), the target checks
(bench/targets.py), and writes summary.md and summary.json next to them. With
``--server-logs`` it also counts the statuses in the servers' logs.

Usage:
  report.py bench/results/20261130T101500Z [--db-url postgres://.../pc_bench_run]
      [--server-logs var/bench/20261130T101500Z]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
from pathlib import Path

from comparisons import comparison_tables, fmt, ratio
from flags import log_checks, server_log_statuses
from paired import paired_summary
from servers import SERVERS
from targets import target_checks


def command_output(*command: str) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unavailable ({error})"
    return (done.stdout or done.stderr).strip()


def machine_facts(db_url: str | None) -> dict[str, str]:
    cpu_model = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    mem_kib = int(Path("/proc/meminfo").read_text().split()[1])
    facts = {
        "cpus": str(os.cpu_count()),
        "cpu_model": cpu_model,
        "memory": f"{mem_kib / 1024 / 1024:.1f} GiB",
        "kernel": platform.release(),
        "python": platform.python_version(),
        "wrk": command_output("wrk", "-v").splitlines()[0],
        "pgbench": command_output("pgbench", "--version"),
        "commit": command_output("git", "rev-parse", "--short", "HEAD"),
    }
    if db_url:
        settings = command_output(
            "psql",
            "-X",
            "-At",
            db_url,
            "-c",
            "SELECT version(), current_setting('fsync'), "
            "current_setting('synchronous_commit'), current_setting('max_connections')",
        ).split("|")
        if len(settings) == 4:
            facts["postgres"] = settings[0].split(" on ")[0]
            facts["fsync"] = settings[1]
            facts["synchronous_commit"] = settings[2]
            facts["max_connections"] = settings[3]
    return facts


def load(results: Path) -> tuple[list[dict], dict | None, dict]:
    runs = [json.loads(path.read_text()) for path in sorted(results.glob("run-*.json"))]
    pgbench_path = results / "pgbench.json"
    pgbench = json.loads(pgbench_path.read_text()) if pgbench_path.exists() else None
    config_path = results / "config.json"
    config = json.loads(config_path.read_text()) if config_path.exists() else {}
    return runs, pgbench, config


def table_rows(runs: list[dict]) -> list[dict]:
    """One row per (workload, connections, wrk threads), every server's run under
    its label (None where it did not run), and ours/ref."""
    keyed: dict[tuple, dict[str, dict]] = {}
    for run in runs:
        key = (run["workload"], run["connections"], run["wrk_threads"])
        keyed.setdefault(key, {})[run["server"]] = run
    order = ["working_notes", "replays", "content", "scope_get"]
    rows = []
    for (workload, connections, threads), servers in sorted(
        keyed.items(),
        key=lambda item: (
            order.index(item[0][0]) if item[0][0] in order else 99,
            item[0][1],
            item[0][2],
        ),
    ):
        rows.append(
            {
                "workload": workload,
                "connections": connections,
                "wrk_threads": threads,
                **{server: servers.get(server) for server in SERVERS},
                "ratio": ratio(servers.get("ours"), servers.get("ref")),
            }
        )
    return rows


def render_markdown(
    rows: list[dict], pgbench: dict | None, facts: dict, config: dict, checks: list[str]
) -> str:
    lines = ["# Benchmark run", ""]
    lines += ["| machine | |", "|---|---|"]
    lines += [f"| {key} | {value} |" for key, value in {**facts, **config}.items()]
    lines += [
        "",
        "| workload | c | wrk -t | server | req/s | p50 ms | p99 ms | errors | non-2xx "
        "| ours/ref | CPU cores: server / postgres / redis / wrk / other |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row, server, run in each_run(rows):
        cpu = run["cpu_cores"]
        lines.append(
            f"| {row['workload']} | {row['connections']} | {row['wrk_threads']} "
            f"| {server} | {run['rps']:.1f} | {run['p50_ms']:.1f} "
            f"| {run['p99_ms']:.1f} | {run['errors']} | {run.get('non_2xx', '-')} "
            f"| {fmt(row['ratio'], '{:.2f}x') if server == 'ours' else ''} "
            f"| {cpu['server']:.2f} / {cpu['postgres']:.2f} / "
            f"{cpu.get('redis', 0):.2f} / {cpu['wrk']:.2f} / {cpu['other']:.2f} |"
        )
    lines += comparison_tables(rows, config)
    if pgbench:
        lines.append("")
        for form, result in pgbench["forms"].items():
            lines.append(
                f"- pgbench, capture transaction as {form}, {result['clients']} "
                f"clients: **{result['tps']:.1f} tps** (p50 {result['p50_ms']:.1f} ms,"
                f" p99 {result['p99_ms']:.1f} ms, failed {result['failed']});"
                f" `{result['command']}`"
            )
    if checks:
        lines += ["", "## Targets", ""] + [f"- {check}" for check in checks]
    return "\n".join(lines) + "\n"


def each_run(rows: list[dict]):
    """(row, server label, run) for every run, servers in table order."""
    for row in rows:
        for server in SERVERS:
            if row[server] is not None:
                yield row, server, row[server]


def print_table(
    rows: list[dict], pgbench: dict | None, config: dict, checks: list[str]
) -> None:
    header = (
        f"{'workload':<14}{'c':>3}{'t':>3}  {'server':<14}{'req/s':>9}{'p50 ms':>9}"
        f"{'p99 ms':>9}{'errors':>8}{'non-2xx':>8}{'ours/ref':>10}"
        "   cpu srv/pg/redis/wrk/other"
    )
    print(header)
    print("-" * len(header))
    for row, server, run in each_run(rows):
        cpu = run["cpu_cores"]
        shown_ratio = fmt(row["ratio"], "{:.2f}x") if server == "ours" else ""
        print(
            f"{row['workload']:<14}{row['connections']:>3}{row['wrk_threads']:>3}  "
            f"{server:<14}{run['rps']:>9.1f}{run['p50_ms']:>9.1f}{run['p99_ms']:>9.1f}"
            f"{run['errors']:>8}{run.get('non_2xx', '-'):>8}{shown_ratio:>10}   "
            f"{cpu['server']:.2f}/{cpu['postgres']:.2f}/{cpu.get('redis', 0):.2f}/"
            f"{cpu['wrk']:.2f}/{cpu['other']:.2f}"
        )
    for line in comparison_tables(rows, config):
        print(line)
    if pgbench:
        print()
        for form, result in pgbench["forms"].items():
            print(
                f"pgbench capture transaction ({form}), {result['clients']} clients: "
                f"{result['tps']:.1f} tps (p50 {result['p50_ms']:.1f} ms, "
                f"p99 {result['p99_ms']:.1f} ms)"
            )
    print()
    for check in checks:
        print(f"  * {check}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--db-url", default=None)
    parser.add_argument("--server-logs", type=Path, default=None, metavar="DIR")
    args = parser.parse_args()

    runs, pgbench, config = load(args.results)
    inprocess_path = args.results / "inprocess.json"
    inprocess = (
        json.loads(inprocess_path.read_text()) if inprocess_path.exists() else None
    )
    paired = paired_summary(args.results)
    rows = table_rows(runs)
    checks = target_checks(rows, pgbench, inprocess, paired)
    if paired and paired["failed_legs"]:
        checks.append(
            "alternating rounds with failures (their ratios are not comparable): "
            + "; ".join(paired["failed_legs"])
        )
    if args.server_logs:
        checks += log_checks(server_log_statuses(args.server_logs))
    facts = machine_facts(args.db_url)
    print_table(rows, pgbench, config, checks)
    (args.results / "summary.md").write_text(
        render_markdown(rows, pgbench, facts, config, checks)
    )
    (args.results / "summary.json").write_text(
        json.dumps(
            {
                "machine": facts,
                "config": config,
                "rows": rows,
                "pgbench": pgbench,
                "inprocess": inprocess,
                "paired": paired,
                "targets": checks,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"\nwrote {args.results / 'summary.md'} and summary.json")


if __name__ == "__main__":
    main()
