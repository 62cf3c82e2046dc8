"""The reference server (PowerContext 1.4.1) run for a test, from ``.venv-bench-ref``.

It binds 127.0.0.1 only, in access mode ``enforced`` with one static token (or
``disabled``: with access enforced it reports every schema error as
``invalid_access_request`` without details, so error items are compared with
access disabled), with
a clean environment (no provider or proxy variables, no env file) and its data -
the SQLite database the importer reads - under a directory of the test's own.
Stopped by its own process id.
"""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / ".venv-bench-ref" / "bin" / "powercontext"
STATIC_TOKEN = "reference-static-token-0123456789abcdef"


@dataclass(frozen=True)
class ReferenceServer:
    url: str
    database: Path  # the SQLite file it writes


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def reference_server(
    data: Path, *, access: str = "enforced"
) -> Iterator[ReferenceServer]:
    """Run the reference server with its data under ``data`` until the block ends."""
    if not SERVER.exists():
        pytest.fail(
            f"{SERVER} is missing: `make test` creates it "
            "(pip install 'powercontext[server,cli]==1.4.1' into .venv-bench-ref)."
        )
    home, workspace = data / "home", data / "workspace"
    home.mkdir(parents=True)
    workspace.mkdir()
    port = _free_port()
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "POWERCONTEXT_HOME": str(home),
        "POWERCONTEXT_SERVER_METRICS_ENABLED": "false",
        "POWERCONTEXT_SERVER_ACCESS_MODE": access,
    }
    if access == "enforced":
        env["POWERCONTEXT_SERVER_AUTH_TOKEN"] = STATIC_TOKEN
    command = [str(SERVER), "server", "run", "--no-env-file"]
    with (data / "server.log").open("wb") as log:
        process = subprocess.Popen(
            [*command, "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            cwd=workspace,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_live(url, process)
        yield ReferenceServer(url, home / "powercontext.db")
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# The reference needs about 6 s of CPU to answer its liveness probe; on a
# 2-core machine at a load average of 15 that is over a minute (seen: two
# compat tests of a fresh clone's make test failed at 60 s). The wait ends as
# soon as it answers, so a long bound costs nothing on a quiet machine.
LIVE_WITHIN_SECONDS = 240


def _wait_live(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + LIVE_WITHIN_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the reference server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/health/live", timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    pytest.fail(
        f"the reference server did not become live within {LIVE_WITHIN_SECONDS} s"
    )
