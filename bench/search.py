"""Search at scale: query latency through HTTP, and what the indexes cost captures.

Run against a server already serving a seeded database (docs/performance.md,
"Search"): ``latency`` sends each query ``--requests`` times, one at a time, and
prints p50/p95 in milliseconds; ``capture`` runs wrk's new-working-note workload
(bench/wrk/working_notes.lua) at ``--connections`` and prints requests per second.
The caller drops or builds the search indexes between capture runs
(docs/operations.md, "Search indexes"); bench/search_capture_ab.sh does the whole
comparison, on copies of one seeded database with and without them.

Usage:
  search.py latency --base-url URL --token T --scope S [--requests 200]
  search.py capture --base-url URL --token T --scope S [--connections 16]
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

WRK_DIR = Path(__file__).resolve().parent / "wrk"
QUERIES = (
    ("selective word", "987653", "words"),
    ("word + phrase", '"seeded note" 987652', "words"),
    ("8-char substring", "ce 98765", "substring"),
    ("8-char substring, digits", "e 987651", "substring"),
)


def latency(args: argparse.Namespace) -> None:
    for label, q, match in QUERIES:
        query = urllib.parse.urlencode({"q": q, "match": match, "limit": 50})
        url = f"{args.base_url}/v1/scopes/{args.scope}/search?{query}"
        request = urllib.request.Request(
            url, headers={"Authorization": f"Bearer {args.token}"}
        )
        timings, found = [], 0
        for _ in range(args.requests):
            started = time.perf_counter()
            with urllib.request.urlopen(request) as response:
                body = json.load(response)
            timings.append((time.perf_counter() - started) * 1000)
            found = len(body["items"])
        timings.sort()
        p95 = timings[int(len(timings) * 0.95) - 1]
        print(
            f"{label:28} q={q!r:24} {match:9} items={found:3}"
            f" p50={statistics.median(timings):7.2f} ms p95={p95:7.2f} ms"
        )


def capture(args: argparse.Namespace) -> None:
    env = {
        **os.environ,
        "BENCH_SCOPE": args.scope,
        "BENCH_TOKEN": args.token,
        "BENCH_NONCE": secrets.token_hex(4),
        "BENCH_EXPECT": "202",
        "BENCH_WRK_DIR": str(WRK_DIR),
    }
    output = subprocess.run(
        [
            "wrk",
            "-t2",
            f"-c{args.connections}",
            f"-d{args.duration}",
            "-s",
            str(WRK_DIR / "working_notes.lua"),
            args.base_url,
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    line = next(x for x in output.splitlines() if x.startswith("BENCH_JSON "))
    result = json.loads(line.removeprefix("BENCH_JSON "))
    rate = result["requests"] / (result["duration_us"] / 1e6)
    print(
        f"{args.label}: c={args.connections} {rate:.1f} req/s"
        f" p50={result['latency_us']['p50'] / 1000:.1f} ms"
        f" statuses={result['statuses']} errors={result['errors']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("latency", "capture"):
        command = commands.add_parser(name)
        command.add_argument("--base-url", required=True)
        command.add_argument("--token", required=True)
        command.add_argument("--scope", required=True)
        command.add_argument("--requests", type=int, default=200)
        command.add_argument("--connections", type=int, default=16)
        command.add_argument("--duration", default="20s")
        command.add_argument("--label", default="capture")
    args = parser.parse_args()
    {"latency": latency, "capture": capture}[args.command](args)


if __name__ == "__main__":
    main()
