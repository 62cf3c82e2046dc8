"""Logging: one JSON object per line (or one plain line in development), each with
the request's id (docs/operations.md, "Logs").

JSON is written by ``powercontext.logformat``: the encoder escapes every control
and non-ASCII character, so no value can break a line or forge another. The request
line adds its fields (method, path, route, status, duration_ms, principal,
queries, traceparent). Nothing logs a token, a secret or the text of a Source or
a note.
"""

import logging
import sys
from typing import Any

FORMATS = ("json", "plain")


def default_log_format() -> str:
    """The format when ``POWERCONTEXT_LOG_FORMAT`` is not set: plain lines for a
    person at a terminal (standard error is a TTY, as under ``make run``), JSON
    everywhere else (a systemd unit, a pipe, a file). The application and the
    server's own lines (powercontext.serve) both ask here, so one terminal shows one
    format."""
    return "plain" if sys.stderr.isatty() else "json"


def lean_log_records() -> None:
    """Leave out of every log record what no format here prints: the caller's file,
    line and function (a walk up the stack per record), the thread and the
    multiprocessing name (Python's logging HOWTO, "Optimization"). The process id
    stays: the server's JSON lines print it. Measured: 2.7% of a new note's in-process
    CPU (about 23 us), bench/inprocess_compare.py against the code without it."""
    logging._srcfile = None  # the HOWTO's own switch
    logging.logThreads = False
    logging.logMultiprocessing = False


# The level names the root logger accepts (Python's logging module; upper case).
LOG_LEVELS = tuple(logging.getLevelNamesMapping())


def logging_config(level: str, log_format: str = "json") -> dict[str, Any]:
    """The ``LOGGING`` setting, the root logger at ``level``."""
    if log_format not in FORMATS:
        raise ValueError(f"must be one of {', '.join(FORMATS)}")
    lean_log_records()  # before any record is made under this configuration
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": "powercontext.api.logging.RequestIdFilter"}},
        "formatters": {
            "json": {"()": "powercontext.logformat.application_formatter"},
            "plain": {
                "format": (
                    "%(asctime)s %(levelname)s %(name)s "
                    "request_id=%(request_id)s %(message)s"
                ),
            },
        },
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": log_format,
                "filters": ["request_id"],
            },
        },
        "root": {
            "handlers": ["console"],
            "level": level,
        },
        "loggers": {
            # Our exception handler logs unexpected errors itself, with the request id.
            "django.request": {
                "handlers": ["console"],
                "level": "ERROR",
                "propagate": False,
            },
            "django.db.backends": {"level": "WARNING"},
        },
    }
