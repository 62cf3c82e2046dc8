"""Fixtures driving the reference client (``.venv-ref``) against a live test server."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
REF_PYTHON = ROOT / ".venv-ref" / "bin" / "python"
DRIVER = Path(__file__).with_name("driver.py")

pytestmark = [pytest.mark.postgres, pytest.mark.compat]


@pytest.fixture
def reference_client(live_server: Any) -> Callable[..., list[dict[str, Any]]]:
    """``reference_client(token, steps)`` runs the steps with the reference client."""
    if not REF_PYTHON.exists():
        pytest.fail(
            f"{REF_PYTHON} is missing: `make test` creates it "
            "(pip install 'powercontext[client]==1.4.1' into .venv-ref)."
        )

    def run(token: str | None, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
        completed = subprocess.run(
            [str(REF_PYTHON), str(DRIVER), live_server.url, token or ""],
            input=json.dumps(steps),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd="/",  # keep our own ``powercontext`` package off the driver's path
        )
        assert completed.returncode == 0, completed.stderr
        return json.loads(completed.stdout)

    return run
