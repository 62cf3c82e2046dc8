"""``make test`` and ``make test-browser`` set up the machine themselves.

``tests/host_setup.sh`` runs first: as root it installs the Debian packages the
suite needs and starts Redis; as anyone else it stops at once with the one command
to run. Then ``tests/check_postgres.py`` connects to ``DATABASE_URL``, creating its
database when only that is missing. ``.ci/run`` is nothing but the two make commands.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from tests.robustness.processes import database_drop, database_url_for, free_port

ROOT = Path(__file__).resolve().parents[2]
SETUP = "tests/host_setup.sh"


def _make_dry_run(target: str) -> list[str]:
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.splitlines()


def test_make_test_sets_up_the_host_before_anything_else() -> None:
    [first, *_] = _make_dry_run("test")

    assert "tests/host_setup.sh test" in first


def test_make_test_browser_sets_up_chromium_before_anything_else() -> None:
    [first, *_] = _make_dry_run("test-browser")

    assert "tests/host_setup.sh browser" in first


@pytest.mark.parametrize("target", ["test", "test-browser"])
def test_make_checks_the_database_url_before_running_tests(target: str) -> None:
    lines = _make_dry_run(target)
    check = next(i for i, line in enumerate(lines) if "tests/check_postgres.py" in line)

    assert not any("pytest" in line for line in lines[:check])


def _check_postgres(url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "tests/check_postgres.py", url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.postgres
def test_a_database_url_naming_a_missing_database_gets_it_created() -> None:
    """``DATABASE_URL=postgres://postgres@host/h_mine make test`` on a server where
    ``h_mine`` does not exist yet: created and announced, not "not reachable"."""
    server = os.environ["DATABASE_URL"]
    name = f"h_check_{uuid.uuid4().hex[:12]}"
    url = database_url_for(server, name)
    try:
        done = _check_postgres(url)

        assert done.returncode == 0, done.stderr
        assert f"database '{name}' did not exist; created it" in done.stderr
        with psycopg.connect(url) as conn:
            assert conn.execute(sql.SQL("SELECT current_database()")).fetchone() == (
                name,
            )
        again = _check_postgres(url)
        assert again.returncode == 0
        assert "created" not in again.stderr
    finally:
        database_drop(server, name)


def test_an_unreachable_server_stops_with_the_command_to_run() -> None:
    done = _check_postgres(f"postgres://postgres@127.0.0.1:{free_port()}/postgres")

    assert done.returncode == 1
    assert "PostgreSQL is not reachable at" in done.stderr
    assert "  DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/postgres make test" in (
        done.stderr
    )


def test_make_test_typescript_sets_up_node_before_anything_else() -> None:
    [first, *_] = _make_dry_run("test-typescript")

    assert "tests/host_setup.sh typescript" in first


def test_without_root_missing_node_stops_with_the_one_command_to_run() -> None:
    """A PATH with ``id`` and ``python3`` only: no node, no npm. The directory lies
    outside pytest's own (which only root may enter), so ``nobody`` can use it."""
    runuser = shutil.which("runuser")
    assert runuser is not None
    with tempfile.TemporaryDirectory() as directory:
        bin_dir = Path(directory)
        bin_dir.chmod(0o755)
        for tool in ("id", "python3"):  # the script asks both before its mode
            (bin_dir / tool).symlink_to(f"/usr/bin/{tool}")
        done = subprocess.run(
            [runuser, "-u", "nobody", "--", "/bin/bash", SETUP, "typescript"],
            cwd=ROOT,
            env={"PATH": str(bin_dir)},
            capture_output=True,
            text=True,
            timeout=60,
        )

    assert done.returncode == 1
    assert done.stderr.splitlines()[-2:] == [
        ">>> run this once as root, then make test-typescript again:",
        "    apt-get update && apt-get install -y nodejs npm",
    ]


def test_without_root_a_missing_package_stops_with_the_one_command_to_run() -> None:
    done = subprocess.run(
        ["runuser", "-u", "nobody", "--", "bash", "tests/host_setup.sh", "browser"],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], "CHROMIUM": "/nonexistent/chromium"},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 1
    assert done.stderr.splitlines()[-2:] == [
        ">>> run this once as root, then make test-browser again:",
        "    apt-get update && apt-get install -y chromium",
    ]


def test_on_this_prepared_machine_the_set_up_has_nothing_to_install() -> None:
    done = subprocess.run(
        ["make", "--no-print-directory", "host-test"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )

    assert "INSTALLING" not in done.stderr


def test_ci_runs_only_the_readme_commands() -> None:
    commands = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line and not line.startswith("#")
    ]

    assert commands == [
        "set -euo pipefail",
        'cd "$(dirname "$0")/.."',
        "make test",
        "exec make test-browser",
    ]
