"""In-process CPU per request of this checkout against the baseline revision,
measured in alternating rounds.

This machine's speed drifts by tens of percent over minutes (shared hosts), so
two separate runs of bench/inprocess.py compare two moments as much as two
revisions. Here both run at once, each in its own process on its own database
(bench/inprocess.py --paired; the baseline's through bench/isolated.py from its
worktree), and take turns: a round of N requests of ours, then one of the
baseline's, and so on. Each pair is measured within a second, so the ratio of a
pair is nearly free of the drift; the report gives the median of each side and
the median of the pairs' ratios.

Usage (bench/run.sh runs it in the compare phase when the baseline runs):
  bench/inprocess_compare.py --baseline-dir var/bench/RUN/baseline \\
      --ours-db postgres://.../pc_bench_run \\
      --baseline-db postgres://.../pc_bench_run_base \\
      [--operation working_notes] [--rounds 30] [-n 200] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PYTHON = ROOT / ".venv" / "bin" / "python"


def start(label: str, cwd: Path, database_url: str, operation: str, isolated: bool):
    program = [str(BENCH / "inprocess.py"), "--paired", "--operation", operation]
    if isolated:
        program = [str(BENCH / "isolated.py"), *program]
    env = dict(os.environ, DATABASE_URL=database_url)
    process = subprocess.Popen(
        [str(PYTHON), *program],
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # one request log line per request
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if line != "ready":
        process.kill()
        sys.exit(f"inprocess_compare.py: {label} did not start (it printed {line!r})")
    return process


def one_round(process: subprocess.Popen, count: int) -> tuple[float, float]:
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(f"{count}\n")
    process.stdin.flush()
    answer = process.stdout.readline().split()
    if len(answer) != 2:
        sys.exit("inprocess_compare.py: a measuring process stopped")
    return float(answer[0]), float(answer[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline-dir", type=Path, required=True)
    parser.add_argument("--ours-db", required=True)
    parser.add_argument("--baseline-db", required=True)
    parser.add_argument("--operation", default="working_notes")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("-n", type=int, default=200, help="requests per round")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    ours = start("ours", ROOT, args.ours_db, args.operation, isolated=False)
    baseline = start(
        "the baseline", args.baseline_dir, args.baseline_db, args.operation, True
    )
    pairs = []
    try:
        for number in range(args.rounds):
            # Alternate who goes first, so neither always follows the other.
            if number % 2:
                base, mine = one_round(baseline, args.n), one_round(ours, args.n)
            else:
                mine, base = one_round(ours, args.n), one_round(baseline, args.n)
            pairs.append((mine, base))
    finally:
        for process in (ours, baseline):
            if process.stdin is not None:
                process.stdin.close()
            process.wait(timeout=30)

    ours_cpu = statistics.median(p[0][0] for p in pairs)
    base_cpu = statistics.median(p[1][0] for p in pairs)
    ratio = statistics.median(p[0][0] / p[1][0] for p in pairs)
    record = {
        "operation": args.operation,
        "rounds": args.rounds,
        "requests_per_round": args.n,
        "ours_cpu_ms": round(ours_cpu, 4),
        "baseline_cpu_ms": round(base_cpu, 4),
        "ours_wall_ms": round(statistics.median(p[0][1] for p in pairs), 4),
        "baseline_wall_ms": round(statistics.median(p[1][1] for p in pairs), 4),
        "ratio_median": round(ratio, 4),
        "pairs_cpu_ms": [[round(p[0][0], 4), round(p[1][0], 4)] for p in pairs],
    }
    print(
        f"in-process CPU per request ({args.operation}, {args.rounds} alternating "
        f"rounds of {args.n}): ours {ours_cpu:.3f} ms, baseline {base_cpu:.3f} ms; "
        f"median ratio of the pairs {ratio:.3f} ({(1 - ratio) * 100:.1f}% lower)"
    )
    if args.out is not None:
        args.out.write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
