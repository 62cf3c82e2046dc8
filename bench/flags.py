"""The flags of one `make bench` run: runs that cannot be trusted as they stand
(errors, responses that were not 2xx - a 429 means the rate limits throttled the
bench -, limits that were not checked in Redis, other processes using the CPUs), and
the statuses the servers logged. bench/targets.py and bench/report.py print them.
"""

from __future__ import annotations

import re
from pathlib import Path

from servers import LIMITS_ON, NOISY_CORES, SERVERS

# A request line of the service's log: "POST /v1/... 202 3.1ms principal=bench".
LOG_LINE = re.compile(r" [A-Z]+ \S+ (\d{3}) [0-9.]+ms principal=")


def run_flags(rows: list[dict]) -> list[str]:
    """Every run's flags (``flags_of``), then the not-2xx total over all runs."""
    flags = []
    for row in rows:
        for server in SERVERS:
            if row[server]:
                name = f"{server} {row['workload']} c={row['connections']}"
                if row["wrk_threads"] != 1:
                    name += f" wrk -t{row['wrk_threads']}"
                flags += flags_of(name, server, row[server])
    counted = [
        run
        for row in rows
        for server in SERVERS
        if (run := row[server]) and "non_2xx" in run
    ]
    if counted:
        not_2xx = sum(run["non_2xx"] + run["warmup_non_2xx"] for run in counted)
        throttled = sum(
            run["rate_limited"] + run["warmup_statuses"].get("429", 0)
            for run in counted
        )
        flags.append(
            f"responses not 2xx in all {len(counted)} runs, warm-ups included: "
            f"{not_2xx}, of them 429: {throttled}"
        )
    return flags


def flags_of(name: str, server: str, run: dict) -> list[str]:
    """A run with errors, with any response not 2xx (429: throttled), with limits
    on but fewer Redis scripts than requests, or on a busy machine."""
    flags = []
    if run["errors"]:
        flags.append(
            f"{name}: {run['errors']} errors, statuses {run['statuses']}, "
            f"first unexpected body: {run['unexpected_body']}"
        )
    if run.get("non_2xx") or run.get("warmup_non_2xx"):
        flags.append(
            f"{name}: {run['non_2xx']} responses not 2xx "
            f"({run['rate_limited']} of them 429) in the measured run, "
            f"{run['warmup_non_2xx']} in the warm-up; statuses "
            f"{run['statuses']}, warm-up {run['warmup_statuses']}"
        )
    scripts = run.get("redis_scripts")
    lease = run.get("limit_lease", 1)
    # A lease taken during the warm-up may serve a few measured requests per worker.
    if (
        server in LIMITS_ON
        and scripts is not None
        and scripts * lease + 8 * (lease - 1) < run["requests"]
    ):
        flags.append(
            f"{name}: Redis ran {scripts} scripts for {run['requests']} requests "
            f"with up to {lease} requests per script - not every request's limit "
            "was checked in Redis (the limiter failed open?): the run is not one "
            "with limits on"
        )
    if run["cpu_cores"]["other"] > NOISY_CORES:
        flags.append(
            f"{name}: other processes used {run['cpu_cores']['other']:.2f} cores "
            "during the run; the machine was not quiet, figures are pessimistic"
        )
    return flags


def server_log_statuses(state: Path) -> dict[str, dict[str, int]]:
    """Status counts of the request lines in each server log under ``state``
    (the service's own log: every request, warm-ups and set-up included)."""
    tallies = {}
    for log in sorted(state.glob("*.log")):
        counts: dict[str, int] = {}
        with log.open(errors="replace") as lines:
            for line in lines:
                match = LOG_LINE.search(line)
                if match:
                    counts[match.group(1)] = counts.get(match.group(1), 0) + 1
        if counts:
            tallies[log.name] = dict(sorted(counts.items()))
    return tallies


def log_checks(tallies: dict[str, dict[str, int]]) -> list[str]:
    return [
        f"server log {name}: statuses {counts}"
        + (f" - {counts['429']} answered 429" if "429" in counts else "; no 429")
        for name, counts in tallies.items()
    ]
