"""Measure the database's limit for the capture transaction with pgbench.

Copies the registry tables into a scratch schema of the (migrated) bench database
(bench/pgbench/schema.sql), then runs the capture transaction - journal head
UPDATE ... RETURNING + Source INSERT + attempt INSERT, one transaction, all
clients on one scope - in three forms: three statements between BEGIN and END
(capture_statements.sql), the one data-modifying CTE the service sends, between
BEGIN and END (derived from capture_cte_autocommit.sql and written next to the
results, so the two forms cannot drift apart), and that CTE alone in autocommit
(capture_cte_autocommit.sql). A fourth run sends that CTE to copies without the
search index (the trigram GIN index each capture fills, docs/operations.md
"Search indexes"): what the index costs a capture, read as the difference. Writes
tps and per-transaction latency percentiles (from pgbench's transaction log) for
each to a JSON file; the "cte_autocommit" form, the one the service sends since
01751fc, is the figure the target compares against, and the best form is chosen
among the three the service could send. The scratch schema is dropped afterwards.

Usage:
  pgbench.py --db-url postgres://postgres@127.0.0.1:5432/pc_bench_run \
      --clients 16 --duration 15 --out bench/results/RUN/pgbench.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent / "pgbench"


def psql(db_url: str, *args: str) -> None:
    subprocess.run(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", db_url, *args],
        check=True,
        stdout=subprocess.DEVNULL,
        env=dict(os.environ, PGOPTIONS="-c client_min_messages=warning"),
    )


def percentile(sorted_values: list[int], fraction: float) -> int:
    return sorted_values[
        min(len(sorted_values) - 1, int(fraction * len(sorted_values)))
    ]


PRIMARY = "cte_autocommit"  # what sources/journal.py sends: the CTE alone
UNSEARCHED = "cte_autocommit_without_search_index"
SCRIPTS = {
    "statements": HERE / "capture_statements.sql",
    "cte": None,  # capture_cte_autocommit.sql between BEGIN and END, see in_transaction
    "cte_autocommit": HERE / "capture_cte_autocommit.sql",
    # The same CTE on copies without the search index: not a form of the capture
    # (a Source must be found by search once its capture is answered), a yardstick.
    UNSEARCHED: HERE / "capture_cte_autocommit.sql",
}
# Drops the copies' trigram index, and fails when it finds none: a renamed or
# rebuilt index must not turn this run into a second, unlabelled cte_autocommit.
DROP_SEARCH_INDEX = r"""
DO $$
DECLARE
    name text;
    dropped int := 0;
BEGIN
    FOR name IN
        SELECT indexname FROM pg_indexes
        WHERE schemaname = 'bench_pgshape' AND indexdef LIKE '%gin_trgm_ops%'
    LOOP
        EXECUTE format('DROP INDEX bench_pgshape.%I', name);
        dropped := dropped + 1;
    END LOOP;
    IF dropped = 0 THEN
        RAISE EXCEPTION 'no trigram search index on the copies of the Source table';
    END IF;
END
$$;
"""


def in_transaction(script: Path, out: Path) -> Path:
    """Write ``script`` with BEGIN before its statement and END after it to ``out``.

    pgbench meta-commands (``\\set``) stay first; comments are dropped.
    """
    lines = [line for line in script.read_text().splitlines() if line.strip()]
    meta = [line for line in lines if line.startswith("\\")]
    statement = [line for line in lines if not line.startswith(("\\", "--"))]
    out.write_text("\n".join([*meta, "BEGIN;", *statement, "END;"]) + "\n")
    return out


def pgbench(
    db_url: str,
    script: Path,
    clients: int,
    jobs: int,
    seconds: int,
    *,
    first_id: int,
    logs: str | None,
) -> subprocess.CompletedProcess:
    command = [
        "pgbench",
        "-n",  # no vacuum of pgbench's own tables: we use none
        "-M",
        "prepared",
        f"--client={clients}",
        f"--jobs={jobs}",
        f"--time={seconds}",
        f"--file={script}",
        f"--define=k={first_id}",  # the per-client counter ids are built from
        *(["--log", f"--log-prefix={logs}/tx"] if logs else []),
        db_url,
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"pgbench.py: pgbench failed:\n{done.stdout}\n{done.stderr}")
    done.args = [arg for arg in command if not arg.startswith("--log")]
    return done


def run(db_url: str, script: Path, clients: int, jobs: int, duration: int) -> dict:
    """Warm up, ANALYZE, then the measured run.

    The warm-up matters: prepared statements are planned once per connection,
    and a plan made while the copies are empty reads the Source table
    sequentially for the rest of the run (the service plans every statement).
    """
    pgbench(db_url, script, clients, jobs, 3, first_id=0, logs=None)
    psql(db_url, "-c", "ANALYZE bench_pgshape.sources_contentsource")
    with tempfile.TemporaryDirectory(prefix="bench-pgbench-") as logs:
        done = pgbench(
            db_url, script, clients, jobs, duration, first_id=10**9, logs=logs
        )
        # Log lines: client_id transaction_no latency_us script_no epoch epoch_us
        latencies = sorted(
            int(line.split()[2])
            for path in Path(logs).iterdir()
            for line in path.read_text().splitlines()
        )
    match = re.search(
        r"tps = ([\d.]+) \(without initial connection time\)", done.stdout
    )
    failed = re.search(r"number of failed transactions: (\d+)", done.stdout)
    if not match or not latencies:
        sys.exit(f"pgbench.py: could not read pgbench's output:\n{done.stdout}")
    return {
        "clients": clients,
        "jobs": jobs,
        "seconds": duration,
        "transactions": len(latencies),
        "tps": float(match.group(1)),
        "failed": int(failed.group(1)) if failed else 0,
        "p50_ms": percentile(latencies, 0.50) / 1000,
        "p99_ms": percentile(latencies, 0.99) / 1000,
        "command": " ".join(done.args),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db-url", required=True)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--duration", type=int, default=15)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    forms = {}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for form, script in SCRIPTS.items():
        if script is None:
            script = in_transaction(
                SCRIPTS["cte_autocommit"], args.out.parent / "pgbench_capture_cte.sql"
            )
        psql(args.db_url, "-f", str(HERE / "schema.sql"))  # fresh, empty copies
        try:
            if form == UNSEARCHED:
                psql(args.db_url, "-c", DROP_SEARCH_INDEX)
            forms[form] = run(
                args.db_url, script, args.clients, args.jobs, args.duration
            )
        finally:
            psql(args.db_url, "-c", "DROP SCHEMA bench_pgshape CASCADE")
        result = forms[form]
        print(
            f"  pgbench capture transaction ({form}), {result['clients']} clients: "
            f"{result['tps']:.1f} tps  p50 {result['p50_ms']:.1f} ms"
            f"  p99 {result['p99_ms']:.1f} ms  failed {result['failed']}"
        )
    # The target compares ours with the form our capture sends today; the best
    # form is one the service could send, so never the one without the index.
    best = max(
        (form for form in forms if form != UNSEARCHED),
        key=lambda form: forms[form]["tps"],
    )
    summary = {**forms[PRIMARY], "form": PRIMARY, "best_form": best, "forms": forms}
    args.out.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
