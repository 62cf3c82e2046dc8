"""The reference's own tests, run against this service (docs/decisions/0034).

Each test named in ``reference_tests/selected.txt`` runs in the reference tests'
environment (``.venv-ref-tests``), from the pinned, hash-checked sdist
(``reference_tests/sdist.py``), unedited, with ``reference_tests/live_transport.py``
sending its in-process requests to a live server of ours. Each gets a fresh
database (``transaction=True`` flushes it) and a fresh principal holding ``*:admin``,
whose token the plugin adds to every request: the reference tests run with access
disabled, so their first scope is the caller's own default scope.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.compat.reference_tests.sdist import reference_tests

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.compat,
    pytest.mark.django_db(transaction=True),
]

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_DIR = Path(__file__).with_name("reference_tests")
PYTHON = ROOT / ".venv-ref-tests" / "bin" / "python"


def _selected() -> list[str]:
    lines = (PLUGIN_DIR / "selected.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _left_out() -> list[str]:
    lines = (PLUGIN_DIR / "left_out.txt").read_text().splitlines()
    return [
        line.split()[0] for line in lines if line.strip() and not line.startswith("#")
    ]


@pytest.fixture(scope="session")
def sdist() -> Path:
    return reference_tests()


def test_selected_and_left_out_name_tests_of_the_sdist(sdist: Path) -> None:
    selected, left_out = set(_selected()), set(_left_out())

    assert selected.isdisjoint(left_out)
    assert len(_selected()) == len(selected), "a test selected twice"
    for node in selected:
        assert (sdist / node.split("::")[0]).is_file(), node
    for entry in left_out:
        path = entry.split("::")[0]
        assert sorted(sdist.glob(path)), f"{entry} matches no file of the sdist"


@pytest.mark.parametrize("node", _selected(), ids=str)
def test_reference_test_passes_against_this_service(
    node: str, sdist: Path, live_server: Any, make_token: Callable[..., str]
) -> None:
    if not PYTHON.exists():
        pytest.fail(f"{PYTHON} is missing: `make test` creates it (.venv-ref-tests)")
    env = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(PLUGIN_DIR),
        "PC_COMPAT_BASE_URL": live_server.url,
        "PC_COMPAT_TOKEN": make_token("*:admin", name=f"reference-{node}"[:150]),
        "NO_PROXY": "*",
    }
    completed = subprocess.run(
        [
            str(PYTHON),
            "-m",
            "pytest",
            "-p",
            "live_transport",
            "-p",
            "no:cacheprovider",
            "-q",
            "--no-header",
            "-x",
            node,
        ],
        cwd=sdist,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )

    assert completed.returncode == 0, (
        completed.stdout[-6000:] + completed.stderr[-3000:]
    )
