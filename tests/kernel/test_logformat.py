"""One log record, one JSON line (powercontext/logformat.py; docs/operations.md,
"Logs"): the keys in their order, extras, tracebacks, and nothing that can break
the line."""

from __future__ import annotations

import json
import logging
import re
import sys
from datetime import UTC, datetime
from pathlib import Path

from powercontext.logformat import application_formatter, server_formatter


def record(message: str, *args: object, **extra: object) -> logging.LogRecord:
    made = logging.LogRecord(
        "powercontext.request", logging.INFO, __file__, 1, message, args, None
    )
    made.__dict__.update(extra)
    return made


def test_a_request_line_has_its_keys_in_order_and_time_last() -> None:
    line = application_formatter().format(
        record("%s %s", "GET", "/v1/scopes", request_id="7f", status=200, queries=2)
    )

    parsed = json.loads(line)
    assert list(parsed) == [
        "level",
        "logger",
        "request_id",
        "message",
        "status",
        "queries",
        "time",
    ]
    assert parsed["level"] == "INFO"
    assert parsed["logger"] == "powercontext.request"
    assert parsed["message"] == "GET /v1/scopes"
    assert parsed["status"] == 200
    at = datetime.fromisoformat(parsed["time"])
    assert at.utcoffset() == UTC.utcoffset(at)


def test_no_value_can_break_or_forge_a_line() -> None:
    forged = '\n{"level": "ERROR"}\u2028\x1b[31m'
    line = application_formatter().format(
        record("path %s", forged, request_id="-", path=forged)
    )

    assert line.isascii()
    assert "\n" not in line
    assert "\x1b" not in line
    parsed = json.loads(line)
    assert parsed["path"] == forged
    assert parsed["level"] == "INFO"


def test_a_traceback_is_one_field_of_the_line() -> None:
    try:
        raise ZeroDivisionError("division by zero")
    except ZeroDivisionError:
        failed = logging.LogRecord(
            "django", logging.ERROR, __file__, 1, "boom", (), sys.exc_info()
        )
    failed.request_id = "ab"

    line = application_formatter().format(failed)

    assert "\n" not in line
    parsed = json.loads(line)
    assert parsed["message"] == "boom"
    assert parsed["exc_info"].startswith("Traceback (most recent call last):")
    assert parsed["exc_info"].endswith("ZeroDivisionError: division by zero")
    assert list(parsed)[-2:] == ["exc_info", "time"]


def test_a_value_json_cannot_hold_is_written_as_text() -> None:
    line = application_formatter().format(
        record("m", request_id="-", where=Path("/srv"), ids=(1, 2))
    )

    parsed = json.loads(line)
    assert parsed["where"] == "/srv"
    assert parsed["ids"] == [1, 2]


def test_a_record_without_a_request_id_still_has_the_key() -> None:
    """Records of loggers the request-id filter did not see still parse."""
    parsed = json.loads(application_formatter().format(record("plain")))

    assert parsed["request_id"] is None
    assert parsed["message"] == "plain"


def test_the_servers_lines_name_the_process() -> None:
    line = server_formatter().format(record("Spawning worker-1 with PID: %s", 12))

    parsed = json.loads(line)
    assert list(parsed) == ["level", "logger", "process", "message", "time"]
    assert isinstance(parsed["process"], int)
    assert re.fullmatch(r"Spawning worker-1 with PID: 12", parsed["message"])
