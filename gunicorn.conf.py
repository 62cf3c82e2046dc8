"""Gunicorn settings. Start the server with ``-c`` naming this file (docs/deploying.md).

gunicorn reads ``./gunicorn.conf.py`` by itself only when started in this
directory; ``-c /path/to/gunicorn.conf.py`` finds it from anywhere, and the
application refuses to load when it was not read (powercontext/wsgi.py). The env
file is read first, so ``POWERCONTEXT_*`` variables may live there. Every value
can be overridden with ``GUNICORN_CMD_ARGS`` or command-line flags; see
docs/operations.md for sizing.
"""

import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
_FRESH = {"powercontext", "django", "environ"}
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from powercontext import shape  # noqa: E402 - needs ROOT on sys.path
from powercontext.settings.envfile import (  # noqa: E402 - needs ROOT on sys.path
    GUNICORN_CONFIG_MARKER,
    SettingsEnv,
    env_file_read,
)
from powercontext.settings.logs import default_log_format  # noqa: E402

env_file_read()
# A value that is no integer, or out of range, is refused naming the variable and
# where it was set.
env = SettingsEnv()
env.shape_check()
os.environ[GUNICORN_CONFIG_MARKER] = str(Path(__file__).resolve())
# The application is imported from here wherever the server was started.
chdir = str(ROOT)

bind = os.environ.get("POWERCONTEXT_BIND", "127.0.0.1:8000")
# gunicorn's own threaded worker, as released (decision 0035).
worker_class = "gthread"
# One worker more than CPUs: a worker's threads share one GIL, and a third process
# keeps both cores busy while the others wait on PostgreSQL (docs/performance.md).
# The settings size the default body limit from the same numbers (shape.py).
workers = shape.workers()
threads = shape.threads()
timeout = env.int("POWERCONTEXT_WORKER_TIMEOUT", default=30, minimum=0)  # 0: never
graceful_timeout = 30
keepalive = 5  # deploy/nginx.conf closes its idle upstream connections first (4 s)
# A safety valve against slow leaks, not a routine: at ~400 requests/s per worker a
# low limit recycles workers every minute, and the keep-alive connections of the
# restarting worker pile onto the others.
max_requests = env.int("POWERCONTEXT_MAX_REQUESTS", default=500000, minimum=0)
max_requests_jitter = 50000
# Explicit, finite limits (docs/api.md). The longest legal request line - two
# 256-character ids of 4-byte characters percent-encoded (3072 bytes each) and a
# cursor as this service issues them (at most 512 characters) - is about 7 KB;
# 8190 is gunicorn's largest finite value (0 would mean unlimited).
limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 16384
# Don't preload: database connections and pools must be opened in each worker.
preload_app = False
accesslog = None  # the application writes one line per request, with its request id
errorlog = "-"
loglevel = os.environ.get("POWERCONTEXT_GUNICORN_LOG_LEVEL", "info")
# gunicorn's own lines (start, workers, signals) in the application's format: JSON,
# or plain when asked for or, unset, on a terminal (one format per terminal).
# Through a logger class, not logconfig_dict: a dict config would also switch on
# gunicorn's access log (a second line per request) and write each line twice.
if (os.environ.get("POWERCONTEXT_LOG_FORMAT") or default_log_format()) == "json":
    logger_class = "powercontext.gunicorn_logs.JsonLogger"
# Only requests from these addresses may mark themselves HTTPS with
# X-Forwarded-Proto (gunicorn sets wsgi.url_scheme); docs/deploying.md.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")

# Metrics: every worker writes its samples into one directory, so a scrape adds up
# all workers (powercontext/metrics.py). A fresh directory per server, kept across
# reloads; an operator may name one in PROMETHEUS_MULTIPROC_DIR (emptied at start).
if "PROMETHEUS_MULTIPROC_DIR" not in os.environ:
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(
        prefix="powercontext-metrics-"
    )
    os.environ["POWERCONTEXT_METRICS_DIR_OWNED"] = "1"  # removed on exit


def on_starting(server: object) -> None:
    """Start the metrics from zero: samples of an earlier server are not ours."""
    directory = Path(os.environ["PROMETHEUS_MULTIPROC_DIR"])
    directory.mkdir(parents=True, exist_ok=True)
    for stale in directory.glob("*.db"):
        stale.unlink()


def child_exit(server: object, worker: object) -> None:
    """A dead worker's gauges go; its counters stay in the sums."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)  # type: ignore[attr-defined]


def on_exit(server: object) -> None:
    if os.environ.get("POWERCONTEXT_METRICS_DIR_OWNED"):
        shutil.rmtree(os.environ["PROMETHEUS_MULTIPROC_DIR"], ignore_errors=True)


def post_fork(server: object, worker: object) -> None:
    """Tell the application the shape gunicorn actually runs - flags and
    ``GUNICORN_CMD_ARGS`` included - before it loads: the default body limit and
    the large-body slots are sized from it (powercontext/shape.py)."""
    cfg = server.cfg  # type: ignore[attr-defined]
    os.environ["POWERCONTEXT_WORKERS"] = str(cfg.workers)
    os.environ["POWERCONTEXT_THREADS"] = str(cfg.threads)


# Reading the env file imported our package, Django and django-environ into the
# master. Forget them, so that the workers started after an upgrade and a HUP
# import the new code rather than inherit these modules.
for _name in [name for name in sys.modules if name.split(".")[0] in _FRESH]:
    del sys.modules[_name]
