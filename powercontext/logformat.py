"""One log record as one JSON object on one line (docs/operations.md, "Logs").

The object holds the chosen record attributes under their output names, the
traceback and stack when there are any, every ``extra`` field the caller passed,
and ``time`` (UTC, ISO 8601) last:

    {"level": "INFO", "logger": "powercontext.request", "request_id": "...",
     "message": "...", "method": "POST", ..., "time": "2026-12-03T10:03:10+00:00"}

``json.dumps`` escapes every control and non-ASCII character, so no value can break
a line or forge another; a value JSON cannot hold is written as its ``str()``.

This replaces python-json-logger, whose output it keeps key for key: its general
formatter (a template parsed per record, a reserved-name set scanned per extra,
hooks per field) was 4% of a new note's CPU in-process (decision 0028).
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

# What a LogRecord carries of its own; anything else on it came as ``extra``.
RECORD_ATTRIBUTES = frozenset(
    logging.LogRecord("", 0, "", 0, "", (), None).__dict__
) | {"message", "asctime", "taskName"}

_encode = json.JSONEncoder(default=str).encode


class JsonLineFormatter(logging.Formatter):
    """``fields``: (record attribute, output name) pairs, in output order."""

    def __init__(self, fields: tuple[tuple[str, str], ...]) -> None:
        super().__init__()
        self.fields = fields

    def format(self, record: logging.LogRecord) -> str:
        record.message = record.getMessage()
        line: dict[str, Any] = {}
        for attribute, name in self.fields:
            line[name] = getattr(record, attribute, None)
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exc_info"] = record.exc_text
        if record.stack_info:
            line["stack_info"] = self.formatStack(record.stack_info)
        for key, value in record.__dict__.items():
            if key not in RECORD_ATTRIBUTES and key not in line:
                line[key] = value
        line["time"] = datetime.fromtimestamp(record.created, tz=UTC).isoformat()
        return _encode(line)


def application_formatter() -> JsonLineFormatter:
    """The service's records: level, logger, the request's id and the message."""
    return JsonLineFormatter(_fields_around("request_id"))


def server_formatter() -> JsonLineFormatter:
    """The server's own records (granian's): level, logger, the process id and
    the message."""
    return JsonLineFormatter(_fields_around("process"))


def _fields_around(attribute: str) -> tuple[tuple[str, str], ...]:
    """Level and logger, then ``attribute`` under its own name, then the message."""
    return (
        ("levelname", "level"),
        ("name", "logger"),
        (attribute, attribute),
        ("message", "message"),
    )
