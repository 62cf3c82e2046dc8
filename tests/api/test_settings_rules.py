"""Settings that contradict each other stop the service at startup, with a message
naming the rule (docs/operations.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def check_with(**variables: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "powercontext.settings.local",
        "DATABASE_URL": "sqlite:///:memory:",
        "POWERCONTEXT_ENV_FILE": "",
        **variables,
    }
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_response_budget_below_four_sources_is_refused() -> None:
    refused = check_with(
        POWERCONTEXT_MAX_SOURCE_BYTES="1048576",
        POWERCONTEXT_MAX_RESPONSE_BYTES=str(4 * 1048576 - 1),
    )
    accepted = check_with(
        POWERCONTEXT_MAX_SOURCE_BYTES="1048576",
        POWERCONTEXT_MAX_RESPONSE_BYTES=str(4 * 1048576),
    )

    assert refused.returncode != 0
    assert "POWERCONTEXT_MAX_RESPONSE_BYTES: must be at least 4 x" in refused.stderr
    assert accepted.returncode == 0, accepted.stderr
