"""Side-by-side tables of new working notes for bench/report.py.

Two comparisons, each at c=1 and c=16, with CPU per request from bench/drive.py's
accounting (bench/procstats.py): ours with rate limits on (through Redis) against
the same server restarted with limits off, measured back to back by the limits
phase - the cost of checking the limits - and
ours against the baseline revision (BENCH_BASELINE_REV, the commit before the
capture path was rewritten for speed) - what that rewrite changed in our server's
own CPU per note. The target checks are in bench/targets.py.
"""

from __future__ import annotations

from targets import find


def ratio(ours: dict | None, ref: dict | None) -> float | None:
    if not ours or not ref or not ref["rps"]:
        return None
    return ours["rps"] / ref["rps"]


def fmt(value: float | None, pattern: str = "{:.1f}") -> str:
    return "-" if value is None else pattern.format(value)


def cpu_ms(run: dict, groups: tuple[str, ...]) -> str:
    return " / ".join(f"{run['cpu_ms_per_request'][group]:.2f}" for group in groups)


def comparison_tables(rows: list[dict], config: dict) -> list[str]:
    pairs = [
        row
        for connections in (1, 16)
        if (row := find(rows, "working_notes", connections))
    ]
    return limits_table(pairs, config) + baseline_table(pairs, config)


def limits_table(rows: list[dict], config: dict) -> list[str]:
    """Ours with limits on against ours with limits off, one line per concurrency."""
    limits = [
        (row["connections"], row["ours_limits_on"], row["ours_limits_off"])
        for row in rows
        if row["ours_limits_on"] and row["ours_limits_off"]
    ]
    if not limits:
        return []
    groups = ("server", "redis", "postgres")
    lines = [
        "",
        f"Rate limits, new working notes: on ({config.get('limits', 'Redis')})"
        " vs off; CPU ms/request server / redis / postgres",
        "",
        "| c | on: req/s | p50 ms | CPU ms/req | Redis scripts/req "
        "| off: req/s | p50 ms | CPU ms/req | on/off req/s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {connections} | {on['rps']:.1f} | {on['p50_ms']:.2f} "
        f"| {cpu_ms(on, groups)} "
        f"| {on.get('redis_scripts', 0) / max(1, on['requests']):.2f} "
        f"| {off['rps']:.1f} | {off['p50_ms']:.2f} | {cpu_ms(off, groups)} "
        f"| {fmt(ratio(on, off), '{:.1%}')} |"
        for connections, on, off in limits
    ]
    exact = [
        (row["connections"], row["ours_limits_exact"], row["ours_limits_off"])
        for row in rows
        if row.get("ours_limits_exact") and row["ours_limits_off"]
    ]
    return lines + [
        f"| {connections} exact | {run['rps']:.1f} | {run['p50_ms']:.2f} "
        f"| {cpu_ms(run, groups)} "
        f"| {run.get('redis_scripts', 0) / max(1, run['requests']):.2f} "
        f"| {off['rps']:.1f} | {off['p50_ms']:.2f} | {cpu_ms(off, groups)} "
        f"| {fmt(ratio(run, off), '{:.1%}')} |"
        for connections, run, off in exact
    ]


def baseline_table(rows: list[dict], config: dict) -> list[str]:
    """The baseline revision against ours, one line per concurrency."""
    versus = [
        (row["connections"], row["baseline"], row["ours"])
        for row in rows
        if row["baseline"] and row["ours"]
    ]
    if not versus:
        return []
    groups = ("server", "postgres")
    lines = [
        "",
        f"Baseline ({config.get('baseline', 'BENCH_BASELINE_REV')}) vs ours,"
        " new working notes; CPU ms/request server / postgres",
        "",
        "| c | baseline: req/s | p50 ms | CPU ms/req | ours: req/s | p50 ms "
        "| CPU ms/req | server CPU/note vs baseline |",
        "|---|---|---|---|---|---|---|---|",
    ]
    return lines + [
        f"| {connections} | {base['rps']:.1f} | {base['p50_ms']:.2f} "
        f"| {cpu_ms(base, groups)} | {ours['rps']:.1f} | {ours['p50_ms']:.2f} "
        f"| {cpu_ms(ours, groups)} | {fmt(server_cpu_change(ours, base), '{:+.0%}')} |"
        for connections, base, ours in versus
    ]


def server_cpu_change(ours: dict, base: dict) -> float | None:
    """Our server CPU per request relative to the baseline's, as a change."""
    base_ms = base["cpu_ms_per_request"]["server"]
    return ours["cpu_ms_per_request"]["server"] / base_ms - 1 if base_ms else None
