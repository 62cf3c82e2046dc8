"""``make test`` and ``make test-browser`` set up the machine themselves.

``tests/host_setup.sh`` runs first: as root it installs the Debian packages the
suite needs and starts Redis; as anyone else it stops at once with the one command
to run. ``.ci/run`` is nothing but the two make commands.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

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
    assert done.stderr.splitlines()[-1] == (
        "    apt-get update && apt-get install -y nodejs npm"
    )


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
    assert done.stderr.splitlines()[-1] == (
        "    apt-get update && apt-get install -y chromium"
    )


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
