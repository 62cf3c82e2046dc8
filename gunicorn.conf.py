"""Gunicorn settings (read automatically from the working directory).

Every value can be overridden with ``GUNICORN_CMD_ARGS`` or the variables below;
see docs/operations.md for sizing.
"""

import multiprocessing
import os

bind = os.environ.get("POWERCONTEXT_BIND", "127.0.0.1:8000")
worker_class = "gthread"
# One worker more than CPUs: a worker's threads share one GIL, and a third process
# keeps both cores busy while the others wait on PostgreSQL (docs/performance.md).
workers = int(os.environ.get("POWERCONTEXT_WORKERS", multiprocessing.cpu_count() + 1))
threads = int(os.environ.get("POWERCONTEXT_THREADS", "3"))
timeout = int(os.environ.get("POWERCONTEXT_WORKER_TIMEOUT", "30"))
graceful_timeout = 30
keepalive = 5
# A safety valve against slow leaks, not a routine: at ~400 requests/s per worker a
# low limit recycles workers every minute, and the keep-alive connections of the
# restarting worker pile onto the others.
max_requests = int(os.environ.get("POWERCONTEXT_MAX_REQUESTS", "500000"))
max_requests_jitter = 50000
# The longest legal URL (two 256-character ids percent-encoded as UTF-8, plus a
# 4096-character cursor) passes gunicorn's 8190-byte default; 0 lifts it to 1 MiB.
limit_request_line = 0
limit_request_field_size = 16384
# Don't preload: database connections and pools must be opened in each worker.
preload_app = False
accesslog = None  # the application writes one line per request, with its request id
errorlog = "-"
loglevel = os.environ.get("POWERCONTEXT_GUNICORN_LOG_LEVEL", "info")
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1")
