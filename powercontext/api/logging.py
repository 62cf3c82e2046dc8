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
