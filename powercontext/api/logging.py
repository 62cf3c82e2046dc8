"""Request-id propagation into log records.

The request id lives in a context variable for the duration of one request, so any
log line written while serving it - including a traceback - carries the same id as
the ``X-PowerContext-Request-ID`` response header.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar

current_request_id: ContextVar[str] = ContextVar("current_request_id", default="-")


class RequestIdFilter(logging.Filter):
    """Adds ``record.request_id`` to every record (``-`` outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = current_request_id.get()
        return True


def log_safe(text: str) -> str:
    """``text`` with every unprintable character escaped (``\\n``, ``\\x1b``,
    ``\\u2028``...), so a path or an id can never forge a log line."""
    if text.isprintable():
        return text
    return "".join(
        char if char.isprintable() else char.encode("unicode_escape").decode("ascii")
        for char in text
    )
