"""One log format per terminal: with ``POWERCONTEXT_LOG_FORMAT`` unset, the
application's lines and the server's own lines (powercontext.serve) are plain when
standard error is a terminal (``make run``) and JSON otherwise (a systemd unit, a
pipe); set, it chooses for both."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Prints the server's formatter and the application's format, as each decides.
PROBE = """
from powercontext import serve
from powercontext.settings.envfile import env_file_read
env_file_read()
formatter = serve.server_logging(serve.server_log_format())["formatters"]["server"]
import django
django.setup()
from django.conf import settings
print(formatter.get("()", "server-plain"), settings.POWERCONTEXT_LOG_FORMAT)
"""


def formats(*, terminal: bool, **variables: str) -> list[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("POWERCONTEXT_LOG_FORMAT", "DJANGO_SETTINGS_MODULE")
    }
    env |= {"DJANGO_SETTINGS_MODULE": "powercontext.settings.local", **variables}
    if terminal:
        controller, stderr = pty.openpty()
    else:
        controller, stderr = -1, subprocess.PIPE
    try:
        result = subprocess.run(
            [sys.executable, "-c", PROBE],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        if terminal:
            os.close(stderr)
            os.close(controller)
    assert result.returncode == 0, result
    return result.stdout.split()


def test_a_terminal_gets_plain_lines_from_both() -> None:
    assert formats(terminal=True) == ["server-plain", "plain"]


def test_anything_else_gets_json_from_both() -> None:
    assert formats(terminal=False) == [
        "powercontext.logformat.server_formatter",
        "json",
    ]


@pytest.mark.parametrize("terminal", [True, False])
def test_the_variable_chooses_for_both(terminal: bool) -> None:
    assert formats(terminal=terminal, POWERCONTEXT_LOG_FORMAT="json") == [
        "powercontext.logformat.server_formatter",
        "json",
    ]
    assert formats(terminal=terminal, POWERCONTEXT_LOG_FORMAT="plain") == [
        "server-plain",
        "plain",
    ]
