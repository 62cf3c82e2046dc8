"""The summary of bench/server_ab.sh: per server and concurrency, the median and
range of requests/s and of p50 and p99 latency, and the median of each round's ratio to
the first server named (a paired ratio: both runs of a pair met the same load on
the shared machine, within minutes of each other)."""

from __future__ import annotations

import csv
import statistics
import sys
from collections import defaultdict


def main(path: str) -> None:
    runs: dict[tuple[str, int], dict[int, tuple[float, ...]]] = defaultdict(dict)
    servers: list[str] = []
    with open(path) as file:
        for row in csv.DictReader(file, delimiter="\t"):
            name = row["server"]
            if name not in servers:
                servers.append(name)
            key = (name, int(row["connections"]))
            # Runs recorded before p99 was: p99 unknown (nan).
            runs[key][int(row["round"])] = (
                float(row["rps"]),
                float(row["p50_ms"]),
                float(row.get("p99_ms") or "nan"),
            )
    first = servers[0]
    for connections in (16, 1):
        print(f"c={connections}")
        for name in servers:
            figures = runs[(name, connections)]
            rps = [value[0] for value in figures.values()]
            p50 = [value[1] for value in figures.values()]
            base = runs[(first, connections)]
            rps_ratio = [figures[r][0] / base[r][0] for r in figures if r in base]
            p50_ratio = [figures[r][1] / base[r][1] for r in figures if r in base]
            p99 = [value[2] for value in figures.values()]
            p99_ratio = [figures[r][2] / base[r][2] for r in figures if r in base]
            print(
                f"  {name:8} {statistics.median(rps):7.0f}/s "
                f"({min(rps):.0f}-{max(rps):.0f})  p50 {statistics.median(p50):.2f} ms "
                f"({min(p50):.2f}-{max(p50):.2f})  p99 {statistics.median(p99):.2f} ms "
                f"({min(p99):.2f}-{max(p99):.2f})  vs {first}: "
                f"x{statistics.median(rps_ratio):.3f} rps, "
                f"x{statistics.median(p50_ratio):.3f} p50, "
                f"x{statistics.median(p99_ratio):.3f} p99  ({len(figures)} rounds)"
            )


if __name__ == "__main__":
    main(sys.argv[1])
