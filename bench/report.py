"""Summarise one `make bench` run: a table per workload, ratios and target checks.

Reads the JSON files bench/drive.py and bench/pgbench.py wrote into a results
directory, prints a table (req/s, p50, p99, errors, ours/reference ratio, CPU
split) and writes summary.md and summary.json next to them.

Usage:
  report.py bench/results/20261130T101500Z [--db-url postgres://.../pc_bench_run]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
from pathlib import Path

# The targets for new working notes at 16 connections.
TARGET_RATIO = 8.0
TARGET_PGBENCH_FRACTION = 0.30
TARGET_P99_MS = 50.0
# A run during which other processes used more than this many cores is flagged.
NOISY_CORES = 0.2


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


def ratio(ours: dict | None, ref: dict | None) -> float | None:
    if not ours or not ref or not ref["rps"]:
        return None
    return ours["rps"] / ref["rps"]


def fmt(value: float | None, pattern: str = "{:.1f}") -> str:
    return "-" if value is None else pattern.format(value)


def table_rows(runs: list[dict]) -> list[dict]:
    """One row per (workload, connections, wrk threads), ours next to ref."""
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
        ours, ref = servers.get("ours"), servers.get("ref")
        rows.append(
            {
                "workload": workload,
                "connections": connections,
                "wrk_threads": threads,
                "ours": ours,
                "ref": ref,
                "ratio": ratio(ours, ref),
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
        "| workload | c | wrk -t | server | req/s | p50 ms | p99 ms | errors "
        "| ours/ref | CPU cores: server / postgres / wrk / other |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        for server in ("ref", "ours"):
            run = row[server]
            if run is None:
                continue
            cpu = run["cpu_cores"]
            lines.append(
                f"| {row['workload']} | {row['connections']} | {row['wrk_threads']} "
                f"| {server} | {run['rps']:.1f} | {run['p50_ms']:.1f} "
                f"| {run['p99_ms']:.1f} | {run['errors']} "
                f"| {fmt(row['ratio'], '{:.2f}x') if server == 'ours' else ''} "
                f"| {cpu['server']:.2f} / {cpu['postgres']:.2f} / {cpu['wrk']:.2f}"
                f" / {cpu['other']:.2f} |"
            )
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


def target_checks(rows: list[dict], pgbench: dict | None) -> list[str]:
    def find(workload: str, connections: int) -> dict | None:
        return next(
            (
                row
                for row in rows
                if row["workload"] == workload
                and row["connections"] == connections
                and row["wrk_threads"] == 1
            ),
            None,
        )

    checks = []
    notes = find("working_notes", 16)
    if notes and notes["ours"]:
        ours = notes["ours"]
        if notes["ratio"] is not None:
            noisy = [
                f"{server} ran with {notes[server]['cpu_cores']['other']:.2f} cores "
                "of other load"
                for server in ("ref", "ours")
                if notes[server]["cpu_cores"]["other"] > NOISY_CORES
            ]
            checks.append(
                f"new working notes c=16: {notes['ratio']:.2f}x the reference "
                f"(target >= {TARGET_RATIO:g}x): "
                f"{'met' if notes['ratio'] >= TARGET_RATIO else 'NOT met'}"
                + (f" - inconclusive, {' and '.join(noisy)}" if noisy else "")
            )
        if pgbench:
            fraction = ours["rps"] / pgbench["tps"]
            checks.append(
                f"new working notes c=16: {fraction:.1%} of pgbench's "
                f"{pgbench['tps']:.0f} tps, its {pgbench['form']} form "
                f"(target >= {TARGET_PGBENCH_FRACTION:.0%}): "
                f"{'met' if fraction >= TARGET_PGBENCH_FRACTION else 'NOT met'}"
            )
            best = pgbench["forms"][pgbench["best_form"]]
            if pgbench["best_form"] != pgbench["form"]:
                checks.append(
                    f"new working notes c=16: {ours['rps'] / best['tps']:.1%} of the "
                    f"best form ({pgbench['best_form']}, {best['tps']:.0f} tps)"
                )
        checks.append(
            f"new working notes c=16: p99 {ours['p99_ms']:.1f} ms "
            f"(target <= {TARGET_P99_MS:g} ms): "
            f"{'met' if ours['p99_ms'] <= TARGET_P99_MS else 'NOT met'}"
        )
        replays = find("replays", 16)
        if replays and replays["ours"]:
            faster = replays["ours"]["rps"] >= ours["rps"]
            checks.append(
                f"replays c=16: {replays['ours']['rps']:.1f} req/s vs first captures "
                f"{ours['rps']:.1f} req/s (target: at least as fast): "
                f"{'met' if faster else 'NOT met'}"
            )
    elif pgbench and notes and notes["ref"]:
        checks.append(
            f"reference new working notes c=16: {notes['ref']['rps']:.1f} req/s = "
            f"{notes['ref']['rps'] / pgbench['tps']:.1%} of pgbench's "
            f"{pgbench['tps']:.0f} tps (its own SQLite, shown for scale)"
        )
    for row in rows:
        for server in ("ours", "ref"):
            run = row[server]
            if run and run["errors"]:
                checks.append(
                    f"{server} {row['workload']} c={row['connections']}: "
                    f"{run['errors']} errors, statuses {run['statuses']}, "
                    f"first unexpected body: {run['unexpected_body']}"
                )
            if run and run["cpu_cores"]["other"] > NOISY_CORES:
                checks.append(
                    f"{server} {row['workload']} c={row['connections']}: other "
                    f"processes used {run['cpu_cores']['other']:.2f} cores during "
                    "the run; the machine was not quiet, figures are pessimistic"
                )
    return checks


def print_table(rows: list[dict], pgbench: dict | None, checks: list[str]) -> None:
    header = (
        f"{'workload':<14}{'c':>3}{'t':>3}  {'server':<5}{'req/s':>9}{'p50 ms':>9}"
        f"{'p99 ms':>9}{'errors':>8}{'ours/ref':>10}   cpu srv/pg/wrk/other"
    )
    print(header)
    print("-" * len(header))
    for row in rows:
        for server in ("ref", "ours"):
            run = row[server]
            if run is None:
                continue
            cpu = run["cpu_cores"]
            shown_ratio = fmt(row["ratio"], "{:.2f}x") if server == "ours" else ""
            print(
                f"{row['workload']:<14}{row['connections']:>3}{row['wrk_threads']:>3}  "
                f"{server:<5}{run['rps']:>9.1f}{run['p50_ms']:>9.1f}{run['p99_ms']:>9.1f}"
                f"{run['errors']:>8}{shown_ratio:>10}   {cpu['server']:.2f}/"
                f"{cpu['postgres']:.2f}/{cpu['wrk']:.2f}/{cpu['other']:.2f}"
            )
    if pgbench:
        print()
        for form, result in pgbench["forms"].items():
            print(
                f"pgbench capture transaction ({form}), {result['clients']} clients: "
                f"{result['tps']:.1f} tps (p50 {result['p50_ms']:.1f} ms, "
                f"p99 {result['p99_ms']:.1f} ms)"
            )
    for check in checks:
        print(f"  * {check}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--db-url", default=None)
    args = parser.parse_args()

    runs, pgbench, config = load(args.results)
    rows = table_rows(runs)
    checks = target_checks(rows, pgbench)
    facts = machine_facts(args.db_url)
    print_table(rows, pgbench, checks)
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
                "targets": checks,
            },
            indent=2,
        )
        + "\n"
    )
    print(f"\nwrote {args.results / 'summary.md'} and summary.json")


if __name__ == "__main__":
    main()
