"""``make run`` as the README describes it, in a copy of the checkout.

The copy shares the suite's ``.venv`` and has its own ``var/``. With
``POWERCONTEXT_BIND`` on a free port, the banner's URLs and its ``curl`` line name
that port and the ``curl`` line works as printed; a second ``make run`` prints the
same token, and the database holds one active local token, not two. It leaves
nothing in the user's home.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.robustness.processes import free_port, wait_until

ROOT = Path(__file__).resolve().parents[2]
SKIP = {
    ".git",
    ".venv",
    ".venv-ref",
    ".venv-bench-ref",
    "var",
    "bench",
    "tests",
}
CACHES = ("__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis")


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's files (no .git, no var/) with the suite's .venv linked in."""
    copy = tmp_path_factory.mktemp("checkout") / "powercontext"
    copy.mkdir()
    for entry in ROOT.iterdir():
        if entry.name in SKIP or entry.name.endswith(".egg-info"):
            continue
        if entry.is_dir():
            shutil.copytree(
                entry, copy / entry.name, ignore=shutil.ignore_patterns(*CACHES)
            )
        else:
            shutil.copy2(entry, copy / entry.name)
    (copy / ".venv").symlink_to(ROOT / ".venv")
    return copy


@contextlib.contextmanager
def make_run(checkout: Path, port: int) -> Iterator[tuple[Path, str]]:
    """``make run``; yields (its output file, its banner) once it serves."""
    output = checkout / f"make-run-{port}.log"
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(checkout.parent),
        "POWERCONTEXT_BIND": f"127.0.0.1:{port}",
        "POWERCONTEXT_WORKERS": "1",
    }
    with output.open("wb") as out:
        process = subprocess.Popen(
            ["make", "run"],
            cwd=checkout,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_until(
            lambda: _serving(process, output, port),
            timeout=120,
            what="make run to serve",
        )
        yield output, output.read_text()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)


def _serving(process: subprocess.Popen[bytes], output: Path, port: int) -> bool:
    """Its worker answers: granian says it listens before its workers accept."""
    if process.poll() is not None:
        pytest.fail("make run exited:\n" + output.read_text(errors="replace"))
    if f"Listening at: http://127.0.0.1:{port}" not in output.read_text():
        return False
    try:
        return httpx.get(f"http://127.0.0.1:{port}/health/live").status_code == 200
    except httpx.TransportError:
        return False


def curl_line(banner: str) -> str:
    match = re.search(r"^    (curl .*)$", banner, re.MULTILINE)
    assert match is not None, banner
    return match.group(1)


def active_local_tokens(checkout: Path) -> int:
    with sqlite3.connect(checkout / "var" / "powercontext.sqlite3") as conn:
        (count,) = conn.execute(
            "SELECT count(*) FROM api_apitoken WHERE principal = 'local' AND NOT revoked"
        ).fetchone()
    conn.close()
    return int(count)


def test_make_run_prints_working_lines_for_its_port_and_reuses_its_token(
    checkout: Path,
) -> None:
    port = free_port()
    with make_run(checkout, port) as (_, banner):
        curl = curl_line(banner)
        answer = subprocess.run(
            ["/bin/bash", "-c", curl], capture_output=True, text=True, timeout=30
        )
        # Nothing per user under $HOME (a control socket, say), which the
        # next checkout's make run would take over (or the other way round).
        home = checkout.parent
        assert [path.name for path in home.iterdir()] == [checkout.name]
    with make_run(checkout, port) as (_, second_banner):
        pass

    assert f"powercontext is starting on http://127.0.0.1:{port}\n" in banner
    assert f"Admin: http://127.0.0.1:{port}/admin/" in banner
    assert curl.endswith(f"' http://127.0.0.1:{port}/v1/scopes")
    assert answer.returncode == 0
    assert answer.stdout.startswith('{"items":')
    assert curl_line(second_banner) == curl
    assert active_local_tokens(checkout) == 1
