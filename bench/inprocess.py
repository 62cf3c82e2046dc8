"""CPU per request of one API operation, in-process: the WSGI application called
directly, production settings, no HTTP server and no other thread.

What it measures is the service's own work per request (Django, DRF, validation,
authentication, the statements' client side, logs, metrics), without the HTTP
server's parsing and the GIL hand-offs that `make bench` adds. Run it before and after a
change to the hot path; `--profile` prints where the time goes.

Usage (a migrated PostgreSQL database; rate limits through Redis, as production):
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/pc_profile \\
      .venv/bin/python bench/inprocess.py --operation working_notes -n 2000 \\
      [--profile] 2>/dev/null   # the request log lines go to stderr

Operations: working_notes (a new note per request, api.md 5.2), mcp_working_notes
(the same note as an MCP tools/call of capture_working_note), content (new
content), replays (one note replayed), scope_get, health.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import secrets
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

# The service's code in the current directory when it is a checkout (the baseline's
# worktree, run through bench/isolated.py), else this script's own checkout.
CODE = (
    Path.cwd() if (Path.cwd() / "manage.py").is_file() else Path(__file__).parent.parent
)
sys.path.insert(0, str(CODE.resolve()))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "powercontext.settings.production")
os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(50))
os.environ.setdefault("DJANGO_SECURE_SSL_REDIRECT", "false")
os.environ.setdefault("POWERCONTEXT_CACHE_URL", "redis://127.0.0.1:6379/14")
os.environ.setdefault("POWERCONTEXT_RATE_LIMIT_WRITE", "1000000/s")
os.environ.setdefault("POWERCONTEXT_RATE_LIMIT_READ", "1000000/s")

from powercontext.wsgi import application  # noqa: E402 - after sys.path

NOTE = (
    "Inspected {id}: the tokenizer keeps state between calls, so a second parse of "
    "the same buffer starts mid-token. Checked the reset path; it is only reached "
    "on error."
)


def environ(method: str, path: str, token: str, body: bytes = b"") -> dict[str, Any]:
    return {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "HTTP_AUTHORIZATION": f"Bearer {token}",
        "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
        "wsgi.version": (1, 0),
    }


def call(env: dict[str, Any]) -> tuple[str, bytes]:
    status: list[str] = []

    def start_response(line: str, headers: list, exc_info: Any = None) -> None:
        status.append(line)

    chunks = application(env, start_response)
    try:
        body = b"".join(chunks)
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    return status[0], body


def requests(operation: str, token: str, scope_id: str) -> Iterator[dict[str, Any]]:
    run = secrets.token_hex(4)
    replayed = note_body(scope_id, f"replayed-{run}")
    for number in range(10**9):
        if operation == "working_notes":
            body = note_body(scope_id, f"wn-{run}-{number}")
            yield environ("POST", "/v1/sources/working-notes", token, body)
        elif operation == "content":
            body = json.dumps(
                {
                    "scope_id": scope_id,
                    "source_id": f"ct-{run}-{number}",
                    "content": NOTE.format(id=number),
                }
            ).encode()
            yield environ("POST", "/v1/sources/content", token, body)
        elif operation == "mcp_working_notes":
            yield environ("POST", "/mcp", token, mcp_note_body(scope_id, number, run))
        elif operation == "replays":
            yield environ("POST", "/v1/sources/working-notes", token, replayed)
        elif operation == "scope_get":
            yield environ("GET", f"/v1/scopes/{scope_id}", token)
        elif operation == "health":
            yield environ("GET", "/health/live", token)
        else:
            raise SystemExit(f"unknown operation {operation!r}")


def note(scope_id: str, source_id: str) -> dict[str, str]:
    return {
        "scope_id": scope_id,
        "source_id": source_id,
        "content": NOTE.format(id=source_id),
        "session_id": "bench-session-1",
        "note_kind": "inspection",
    }


def note_body(scope_id: str, source_id: str) -> bytes:
    return json.dumps(note(scope_id, source_id)).encode()


def mcp_note_body(scope_id: str, number: int, run: str) -> bytes:
    """The working_notes request's note, as an MCP ``tools/call`` (made as the
    REST body is, with one encoding: the script's own cost is measured too)."""
    arguments = note(scope_id, f"mcp-{run}-{number}")
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": number,
            "method": "tools/call",
            "params": {"name": "capture_working_note", "arguments": arguments},
        }
    ).encode()


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(
    next_request: Callable[[], dict[str, Any]], count: int
) -> tuple[float, float, dict[str, int]]:
    statuses: dict[str, int] = {}
    cpu, wall = cpu_seconds(), time.perf_counter()
    for _ in range(count):
        status, body = call(next_request())
        if b'"isError":true' in body:  # a failed tool call is HTTP 200
            status += " (tool error)"
        statuses[status] = statuses.get(status, 0) + 1
    return cpu_seconds() - cpu, time.perf_counter() - wall, statuses


def serve_rounds(next_request: Callable[[], dict[str, Any]]) -> None:
    """Measure a round of N requests per line N on stdin, until stdin closes."""
    print("ready", flush=True)
    for line in sys.stdin:
        count = int(line)
        cpu, wall, statuses = measure(next_request, count)
        if len(statuses) != 1:
            raise SystemExit(f"more than one status in a round: {statuses}")
        print(f"{cpu / count * 1000:.4f} {wall / count * 1000:.4f}", flush=True)


def minted_token() -> str:
    """A new admin token, through the command every revision of this service has
    (so the baseline's code runs this script too: bench/run.sh)."""
    from django.core.management import call_command

    out = io.StringIO()
    call_command("createtoken", name="inprocess", grant=["*:admin"], stdout=out)
    return out.getvalue().strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--operation", default="working_notes")
    parser.add_argument("-n", type=int, default=2000, help="measured requests")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="measure -n requests this many times; report the least and the median",
    )
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument(
        "--paired",
        action="store_true",
        help="after the warm-up print 'ready', then measure N requests for each"
        " line N read from stdin and print 'CPU_MS WALL_MS' per request"
        " (bench/inprocess_compare.py)",
    )
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--sort", default="tottime", help="pstats sort key")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()

    token = minted_token()
    status, body = call(
        environ(
            "POST",
            "/v1/scopes",
            token,
            json.dumps(
                {
                    "title": "inprocess",
                    "summary": "Scope created by bench/inprocess.py.",
                    "idempotency_key": f"inprocess-{secrets.token_hex(8)}",
                }
            ).encode(),
        )
    )
    if not status.startswith("201"):
        raise SystemExit(f"scope create answered {status}: {body[:300]!r}")
    scope_id = json.loads(body)["scope_id"]
    stream = requests(args.operation, token, scope_id)

    measure(lambda: next(stream), args.warmup)
    if args.paired:
        serve_rounds(lambda: next(stream))
        return
    profiler = cProfile.Profile(time.process_time) if args.profile else None
    if profiler is not None:
        profiler.enable()
    rounds = [measure(lambda: next(stream), args.n) for _ in range(args.rounds)]
    if profiler is not None:
        profiler.disable()
    statuses = {}
    for _cpu, _wall, counted in rounds:
        for status, count in counted.items():
            statuses[status] = statuses.get(status, 0) + count
    cpu = sorted(r[0] / args.n * 1000 for r in rounds)
    wall = sorted(r[1] / args.n * 1000 for r in rounds)
    spread = ""
    if args.rounds > 1:
        # CPU time only grows with interference (a shared machine, a noisy
        # neighbour): the least round is the closest to the code's own cost.
        spread = (
            f" (least of {args.rounds} rounds; median {cpu[len(cpu) // 2]:.3f} ms CPU,"
            f" {wall[len(wall) // 2]:.3f} ms wall)"
        )
    print(
        f"{args.operation}: {args.n} requests, {cpu[0]:.3f} ms CPU and "
        f"{wall[0]:.3f} ms wall per request{spread}, statuses {statuses}"
        + (" (under cProfile: inflated)" if profiler is not None else "")
    )
    if profiler is not None:
        if os.environ.get("INPROCESS_PSTATS"):
            profiler.dump_stats(os.environ["INPROCESS_PSTATS"])
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(args.sort).print_stats(args.top)
        print(out.getvalue())


if __name__ == "__main__":
    main()
