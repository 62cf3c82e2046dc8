"""Export and restore of one large scope: records/s both ways, the worker's peak RSS.

Seeds a fresh PostgreSQL database with one scope of ``--size`` Sources
(``manage.py seed_sources``, a share of them Working Notes; every Source with its
accepted attempt) and a ten-Source scope for warming up, runs this service as
production does (``python -m powercontext.serve``: granian, production settings)
with ONE worker, and then:

1. exports the small scope over HTTP (the worker's imports and caches warm), reads
   the worker's resident set (``VmRSS``: the baseline) and resets its peak
   (``/proc/PID/clear_refs``);
2. exports the large scope over HTTP (``GET /v1/scopes/{id}/export``), streamed
   to a file: records/s, and the worker's peak resident set (``VmHWM``) minus
   the baseline (the target: at most +64 MiB; docs/performance.md, "Export
   and restore");
3. ``manage.py verify_bundle`` on the file: records/s;
4. ``manage.py import_bundle`` into a second fresh database: records/s, and the
   command's peak RSS.

Usage: bench/bundles.py [--size 1000000] [--port 8500] [--out FILE.json]
(PostgreSQL at BENCH_PG, default postgres://postgres@127.0.0.1:5432; databases
pc_bench_bundles and pc_bench_bundles_restore are dropped and created.)
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python")
PG = os.environ.get("BENCH_PG", "postgres://postgres@127.0.0.1:5432")
SOURCE_DB, RESTORE_DB = "pc_bench_bundles", "pc_bench_bundles_restore"


def environment(database: str, state: Path, port: int) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(state),
        "LANG": "C.UTF-8",
        "POWERCONTEXT_ENV_FILE": "",
        "DJANGO_SETTINGS_MODULE": "powercontext.settings.production",
        "DJANGO_SECURE_SSL_REDIRECT": "false",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_STATIC_ROOT": str(state / "static"),
        "DATABASE_URL": f"{PG}/{database}",
        "POWERCONTEXT_BIND": f"127.0.0.1:{port}",
        "POWERCONTEXT_WORKERS": "1",
        "POWERCONTEXT_RATE_LIMIT_WRITE": "off",
        "POWERCONTEXT_RATE_LIMIT_READ": "off",
        "POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES": "off",
    }


def say(text: str) -> None:
    print(f">>> bundles: {text}", file=sys.stderr, flush=True)


def fresh_database(name: str) -> None:
    for statement in (
        f"DROP DATABASE IF EXISTS {name} WITH (FORCE)",
        f"CREATE DATABASE {name}",
    ):
        subprocess.run(
            [
                "psql",
                "-X",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                f"{PG}/postgres",
                "-c",
                statement,
            ],
            check=True,
        )


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [PYTHON, "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()


def prepared(env: dict[str, str], size: int) -> tuple[str, str, str]:
    """A migrated database with the large and the small scope; their ids, a token."""
    fresh_database(SOURCE_DB)
    manage(env, "migrate", "--noinput", "-v", "0")
    token = manage(
        env, "createtoken", "--name", "bench", "--grant", "*:admin"
    ).splitlines()[-1]
    say(f"seeding {size} Sources")
    started = time.monotonic()
    large = manage(
        env,
        "seed_sources",
        str(size),
        "--create-scope",
        "bench bundles",
        "--notes",
        "0.2",
        "--no-progress",
    ).splitlines()[-1]
    say(f"seeded in {time.monotonic() - started:.0f} s")
    small = manage(
        env, "seed_sources", "10", "--create-scope", "bench warm-up", "--no-progress"
    ).splitlines()[-1]
    subprocess.run(
        ["psql", "-X", "-q", f"{PG}/{SOURCE_DB}", "-c", "VACUUM ANALYZE"], check=True
    )
    return large, small, token


def worker_of(launcher: int) -> int:
    for _ in range(200):
        children = [
            pid
            for path in Path(f"/proc/{launcher}/task").glob("*/children")
            for pid in path.read_text().split()
        ]
        if children:
            return int(children[0])
        time.sleep(0.1)
    raise RuntimeError("the server started no worker")


def memory(pid: int, field: str) -> int:
    """``VmRSS`` or ``VmHWM`` of ``pid``, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def export(base: str, token: str, scope_id: str, path: Path) -> tuple[int, float]:
    """Stream the scope's bundle into ``path``: its lines and the seconds it took."""
    request = urllib.request.Request(
        f"{base}/v1/scopes/{scope_id}/export",
        headers={"Authorization": f"Bearer {token}"},
    )
    started = time.monotonic()
    lines = 0
    with (
        urllib.request.urlopen(request, timeout=3600) as response,
        path.open("wb") as out,
    ):
        while chunk := response.read(1 << 20):
            lines += chunk.count(b"\n")
            out.write(chunk)
    return lines, time.monotonic() - started


def wait_ready(base: str) -> None:
    for _ in range(300):
        try:
            with urllib.request.urlopen(f"{base}/health/ready", timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("the server did not become ready")


def measure_export(
    env: dict[str, str], state: Path, large: str, small: str, token: str
) -> dict:
    base = f"http://{env['POWERCONTEXT_BIND']}"
    log = (state / "server.log").open("wb")
    server = subprocess.Popen(
        [PYTHON, "-m", "powercontext.serve"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=log,
    )
    try:
        wait_ready(base)
        worker = worker_of(server.pid)
        export(base, token, small, state / "small.ndjson")
        export(base, token, small, state / "small.ndjson")
        baseline = memory(worker, "VmRSS")
        Path(f"/proc/{worker}/clear_refs").write_text("5")  # reset VmHWM
        say("exporting over HTTP")
        lines, seconds = export(base, token, large, state / "large.ndjson")
        peak = memory(worker, "VmHWM")
    finally:
        server.terminate()
        server.wait(timeout=60)
    return {
        "lines": lines,
        "seconds": round(seconds, 2),
        "records_per_s": round(lines / seconds),
        "bytes": (state / "large.ndjson").stat().st_size,
        "worker_baseline_rss_mib": round(baseline / 2**20, 1),
        "worker_peak_rss_mib": round(peak / 2**20, 1),
        "worker_peak_over_baseline_mib": round((peak - baseline) / 2**20, 1),
    }


def timed_command(env: dict[str, str], *args: str) -> tuple[float, int]:
    """Seconds and peak RSS (bytes) of ``manage.py ARGS`` (that process alone)."""
    started = time.monotonic()
    process = subprocess.Popen(
        [PYTHON, "manage.py", *args], cwd=ROOT, env=env, stdout=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.monotonic() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"manage.py {args[0]} failed ({process.returncode})")
    return seconds, usage.ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--port", type=int, default=8500)
    parser.add_argument("--out", type=Path, default=None)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-bundles-") as directory:
        state = Path(directory)
        env = environment(SOURCE_DB, state, options.port)
        large, small, token = prepared(env, options.size)
        result: dict = {"size": options.size, "scope": large}
        result["export"] = measure_export(env, state, large, small, token)
        bundle = state / "large.ndjson"
        lines = result["export"]["lines"]
        say("verifying offline")
        seconds, _ = timed_command(env, "verify_bundle", str(bundle))
        result["verify"] = {
            "seconds": round(seconds, 2),
            "records_per_s": round(lines / seconds),
        }
        say("restoring into a fresh database")
        fresh_database(RESTORE_DB)
        restore_env = {**env, "DATABASE_URL": f"{PG}/{RESTORE_DB}"}
        manage(restore_env, "migrate", "--noinput", "-v", "0")
        seconds, peak = timed_command(restore_env, "import_bundle", str(bundle))
        result["restore"] = {
            "seconds": round(seconds, 2),
            "records_per_s": round(lines / seconds),
            "command_peak_rss_mib": round(peak / 2**20, 1),
        }
    text = json.dumps(result, indent=2)
    print(text)
    if options.out is not None:
        options.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
