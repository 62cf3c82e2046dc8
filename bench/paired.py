"""The alternating rounds of one `make bench` run: per-round ratios and their medians.

bench/run.sh's compare phase measures, in each of BENCH_PAIRED_ROUNDS rounds, ours'
new working notes at c=16 through REST, the same notes through MCP ``tools/call``
and the baseline's new notes, one leg after the other, the order rotating from
round to round (records in ``RESULTS/paired/round-N-SERVER-WORKLOAD.json``, as
bench/drive.py writes them). This machine's speed drifts by tens of percent over
minutes, so two figures measured minutes apart compare two moments as much as two
servers; legs of one round are seconds apart and share the drift. So:

- ``mcp_over_rest``: per round, MCP's req/s over REST's; the median is the figure.
- ``ours_over_baseline``: per round, ours' REST req/s over the baseline's.
- ``noise``: the run-to-run noise of one server on one workload in this run - the
  largest deviation of ours' REST rounds from their median, as a fraction of it.
  "Not below the baseline by more than the noise" reads it.

Usage (bench/report.py calls ``paired_summary``):
  paired.py bench/results/RUN   # prints the summary as JSON
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

REST = ("ours", "working_notes")
MCP = ("ours", "mcp_working_notes")
BASELINE = ("baseline", "working_notes")


def load_rounds(results: Path) -> dict[int, dict[tuple[str, str], dict]]:
    """Each round's records, by (server, workload)."""
    rounds: dict[int, dict[tuple[str, str], dict]] = {}
    for path in sorted((results / "paired").glob("round-*.json")):
        number = int(path.name.split("-")[1])
        record = json.loads(path.read_text())
        rounds.setdefault(number, {})[(record["server"], record["workload"])] = record
    return rounds


def ratios(
    rounds: dict[int, dict[tuple[str, str], dict]],
    numerator: tuple[str, str],
    denominator: tuple[str, str],
) -> list[float]:
    """Per round where both legs ran and answered: numerator's req/s over the
    denominator's."""
    found = []
    for legs in rounds.values():
        top, bottom = legs.get(numerator), legs.get(denominator)
        if top and bottom and bottom["rps"] > 0:
            found.append(top["rps"] / bottom["rps"])
    return found


def comparison(values: list[float]) -> dict[str, Any] | None:
    if not values:
        return None
    return {
        "median": statistics.median(values),
        "least": min(values),
        "most": max(values),
        "rounds": len(values),
        "per_round": values,
    }


def rates(
    rounds: dict[int, dict[tuple[str, str], dict]], leg: tuple[str, str]
) -> list[float]:
    return [legs[leg]["rps"] for legs in rounds.values() if leg in legs]


def noise(values: list[float]) -> float | None:
    """The largest deviation of ``values`` from their median, as a fraction of it."""
    if len(values) < 2:
        return None
    middle = statistics.median(values)
    return max(abs(value - middle) for value in values) / middle if middle else None


def paired_summary(results: Path) -> dict[str, Any] | None:
    """The comparisons of the run's alternating rounds, or None without any."""
    rounds = load_rounds(results)
    if not rounds:
        return None
    failed = [
        f"round {number} {server} {workload}: {record['non_2xx']} non-2xx, "
        f"{record['errors']} errors"
        for number, legs in sorted(rounds.items())
        for (server, workload), record in sorted(legs.items())
        if record.get("non_2xx") or record.get("errors")
    ]
    return {
        "rounds": len(rounds),
        "rates": {
            f"{server} {workload}": rates(rounds, (server, workload))
            for server, workload in (REST, MCP, BASELINE)
        },
        "mcp_over_rest": comparison(ratios(rounds, MCP, REST)),
        "ours_over_baseline": comparison(ratios(rounds, REST, BASELINE)),
        "noise": noise(rates(rounds, REST)),
        "failed_legs": failed,
    }


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(json.dumps(paired_summary(Path(sys.argv[1])), indent=2))


if __name__ == "__main__":
    main()
