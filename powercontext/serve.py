"""Serve the application with granian's WSGI interface: the server's launcher.

Run as ``python -m powercontext.serve``. Production (deploy/powercontext.service),
``make run``, the benchmarks and every test that starts a server run this module
(docs/operations.md, "Running it"; decision 0044). It reads the env file first, so
``POWERCONTEXT_*`` variables may live there, refuses a value that is no integer or
out of range naming where it was set, and starts granian through its public Python
API (``granian.Granian``) with the shape's workers and threads.

What granian does not do itself is done around it: the request line and header
limits, the trusted proxy and an environ without the process environment are WSGI
layers of ours (``powercontext.api.wsgi_head``); the metrics directory is made
here, before any worker starts, and a dead worker's gauges are dropped by the
worker that replaces it (``powercontext.metrics.forget_dead_workers``).
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from granian import Granian
from granian.constants import HTTPModes, Interfaces, RuntimeModes
from granian.http import HTTP1Settings
from granian.log import LogLevels

from powercontext import shape
from powercontext.serve_signals import SignalRelay
from powercontext.settings.envfile import (
    ROOT,
    SERVE_MARKER,
    SettingsEnv,
    env_file_read,
    settings_error,
)
from powercontext.settings.logs import default_log_format

if TYPE_CHECKING:
    # What granian.Granian is: its process server, or its thread server on a
    # Python without the GIL.
    from granian.server import MPServer, MTServer

APPLICATION = "powercontext.wsgi:application"
DEFAULT_BIND = "127.0.0.1:8000"
# On SIGTERM or a reload, a worker has this long to finish its requests in flight.
GRACEFUL_SECONDS = 30
# How often a worker's memory is compared with POWERCONTEXT_WORKER_MAX_RSS.
RSS_SAMPLE_SECONDS = 30
METRICS_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
METRICS_DIR_OWNED_VARIABLE = "POWERCONTEXT_METRICS_DIR_OWNED"
# Variables gunicorn read that nothing reads any more: said once at start, so an
# env file carried over from an earlier release does not silently keep them.
RETIRED_VARIABLES = {
    "POWERCONTEXT_MAX_REQUESTS": "use POWERCONTEXT_WORKER_MAX_RSS",
    "POWERCONTEXT_WORKER_TIMEOUT": "granian has no worker heartbeat",
    "POWERCONTEXT_GUNICORN_LOG_LEVEL": "use POWERCONTEXT_SERVER_LOG_LEVEL",
    "GUNICORN_CMD_ARGS": "set POWERCONTEXT_* variables instead",
}


# Imported here to read the configuration, and forgotten before the workers fork
# from this process: a reload after an upgrade must import the new code.
FRESH_IN_WORKERS = {"powercontext", "django", "environ"}


def main(arguments: list[str]) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m powercontext.serve", description=(__doc__ or "").splitlines()[0]
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="read the configuration, refuse a bad value, and exit without serving",
    )
    check_only = parser.parse_args(arguments).check
    env_file_read()
    server = granian_server(SettingsEnv())
    if check_only:
        metrics_directory_remove()
        return
    signals = SignalRelay(server)
    server.on_startup(metrics_directory_prepare)
    # After granian has set its own handlers (powercontext/serve_signals.py).
    server.on_startup(signals.install)
    server.on_shutdown(metrics_directory_remove)
    # systemctl reload (HUP): the new workers see the env file as it is now.
    server.on_reload(env_file_read)
    forget_modules(FRESH_IN_WORKERS)
    signals.register_at_fork()
    server.serve()


def forget_modules(packages: set[str]) -> None:
    """Drop ``packages`` from ``sys.modules``: a worker forked later imports them
    anew. Names bound here keep working."""
    for name in [name for name in sys.modules if name.split(".")[0] in packages]:
        del sys.modules[name]


def granian_server(env: SettingsEnv) -> MPServer | MTServer:
    """granian as this service runs it, from the environment; refuses bad values
    before it changes anything."""
    env.shape_check()
    workers, threads = shape.workers(), shape.threads()
    address, port = bind_address(os.environ.get("POWERCONTEXT_BIND", DEFAULT_BIND))
    keepalive = env.int("POWERCONTEXT_KEEPALIVE", default=5, minimum=1)
    max_rss = env.int(
        "POWERCONTEXT_WORKER_MAX_RSS", default=default_worker_max_rss(), minimum=0
    )
    log_level = env.str("POWERCONTEXT_SERVER_LOG_LEVEL", default="info").lower()
    if log_level not in LogLevels.__members__:
        raise env_refusal("POWERCONTEXT_SERVER_LOG_LEVEL", list(LogLevels.__members__))
    # The workers size the default body limit and the large-body slots from the
    # shape they run (powercontext/shape.py): the same numbers as granian's.
    os.environ["POWERCONTEXT_WORKERS"] = str(workers)
    os.environ["POWERCONTEXT_THREADS"] = str(threads)
    os.environ[SERVE_MARKER] = "1"
    metrics_directory_choose()
    return Granian(
        APPLICATION,
        address=address,
        port=port,
        interface=Interfaces.WSGI,
        # HTTP/1.1 only, as nginx speaks to it: its settings below are HTTP/1's.
        http=HTTPModes.http1,
        workers=workers,
        blocking_threads=threads,
        # One single-threaded Rust runtime per worker: granian's default for WSGI
        # is its multi-threaded one, whose hand-offs between threads cost more
        # than one I/O thread gains. Measured in alternating rounds (decision
        # 0044): 1.05-1.12x the new notes per second at c=16 and a lower p99; the
        # c=1 p50 within the noise (0.89-1.03x).
        runtime_mode=RuntimeModes.st,
        # hyper's header read timeout also runs while a kept-alive connection
        # waits for its next request: it is the keep-alive. deploy/nginx.conf
        # lets its idle upstream connections go first (4 s).
        http1_settings=HTTP1Settings(
            header_read_timeout=keepalive * 1000, keep_alive=True
        ),
        respawn_failed_workers=True,
        workers_kill_timeout=GRACEFUL_SECONDS,
        workers_max_rss=max_rss or None,
        rss_sample_interval=RSS_SAMPLE_SECONDS,
        # The application writes one line per request, with its request id.
        log_access=False,
        log_level=LogLevels(log_level),
        log_dictconfig=server_logging(server_log_format()),
        working_dir=ROOT,
    )


def bind_address(bind: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:port`` for IPv6) as granian takes it."""
    host, separator, port = bind.rpartition(":")
    if not separator or not port.isdigit():
        raise env_refusal("POWERCONTEXT_BIND", ["host:port"])
    return host.strip("[]") or "127.0.0.1", int(port)


def default_worker_max_rss() -> int:
    """A worker's share of the memory budget, in MiB: the shape keeps a worker
    under it with every thread on a worst-case body, so a worker past it has
    leaked (powercontext/shape.py)."""
    return shape.memory_budget() // shape.workers() // shape.MIB


def env_refusal(name: str, accepted: list[str]) -> Exception:
    return settings_error(name, f"must be one of: {', '.join(accepted)}.")


def server_log_format() -> str:
    """The application's choice (``POWERCONTEXT_LOG_FORMAT``, else plain on a
    terminal and JSON elsewhere): one terminal shows one format."""
    return os.environ.get("POWERCONTEXT_LOG_FORMAT") or default_log_format()


def server_logging(log_format: str) -> dict[str, Any]:
    """granian's own lines (start, workers, signals) in the application's format,
    on standard error like the application's; no access log."""
    formatter: dict[str, Any] = (
        {"()": "powercontext.logformat.server_formatter"}
        if log_format == "json"
        else {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}
    )
    handler = {
        "class": "logging.StreamHandler",
        "formatter": "server",
        "stream": "ext://sys.stderr",
    }
    return {
        "formatters": {"server": formatter},
        "handlers": {"server": handler},
        "loggers": {
            "_granian": {"handlers": ["server"], "propagate": False},
            "granian.access": {"handlers": ["server"], "propagate": False},
        },
    }


def metrics_directory_choose() -> None:
    """Every worker writes its samples into one directory, so a scrape adds up all
    workers (powercontext/metrics.py): a fresh one per server unless the operator
    names one in PROMETHEUS_MULTIPROC_DIR."""
    if METRICS_DIR_VARIABLE not in os.environ:
        os.environ[METRICS_DIR_VARIABLE] = tempfile.mkdtemp(
            prefix="powercontext-metrics-"
        )
        os.environ[METRICS_DIR_OWNED_VARIABLE] = "1"


def metrics_directory_prepare() -> None:
    """Start the metrics from zero: samples of an earlier server are not ours."""
    directory = Path(os.environ[METRICS_DIR_VARIABLE])
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink()
    retired_variables_report()


def metrics_directory_remove() -> None:
    if os.environ.get(METRICS_DIR_OWNED_VARIABLE):
        shutil.rmtree(os.environ[METRICS_DIR_VARIABLE], ignore_errors=True)


def retired_variables_report() -> None:
    for name, instead in RETIRED_VARIABLES.items():
        if name in os.environ:
            logging.getLogger("_granian").warning(
                "%s is no longer read (gunicorn's, decision 0044): %s", name, instead
            )


if __name__ == "__main__":
    main(sys.argv[1:])
