"""docs/migrating.md, sections 1 to 3, run as written against a reference file.

The reference's database is left in WAL mode with its last writes still in the
``-wal`` file (as a server that was not stopped cleanly leaves it); section 1's
copy must bring them along, sections 2 and 3 import them. ``~`` is a temporary
home, ``/srv/reference`` a temporary directory, and the commands run from the
checkout with an env file of their own (SQLite).
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.deploy.runbook import Runbook
from tests.importing.reference_file import ReferenceFile, payload

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "migrating.md"
SOURCES = 5


def _reference_with_a_live_wal(home: Path) -> ReferenceFile:
    """A reference database whose Sources are only in its ``-wal`` file."""
    (home / ".powercontext").mkdir(parents=True)
    file = ReferenceFile(home / ".powercontext" / "powercontext.db")
    file.db.execute("PRAGMA journal_mode=WAL")
    file.db.execute("PRAGMA wal_autocheckpoint=0")
    file.db.commit()
    file.scope("scp_moved", title="Moved")
    file.sources("scp_moved", [(f"s{n}", payload(f"s{n}", n)) for n in range(SOURCES)])
    file.db.commit()
    assert (file.path.parent / "powercontext.db-wal").stat().st_size > 0
    return file


def test_sections_1_to_3_move_every_source_also_from_the_wal(tmp_path: Path) -> None:
    home, reference = tmp_path / "home", tmp_path / "reference"
    reference.mkdir()
    file = _reference_with_a_live_wal(home)
    env_file = tmp_path / "powercontext.env"
    env_file.write_text(
        "DJANGO_SETTINGS_MODULE=powercontext.settings.production\n"
        f"DJANGO_SECRET_KEY={secrets.token_urlsafe(50)}\n"
        f"DATABASE_URL=sqlite:///{tmp_path / 'db.sqlite3'}\n"
    )
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "POWERCONTEXT_ENV_FILE": str(env_file),
    }
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    book = Runbook(
        DOC,
        workdir=tmp_path,
        env=env,
        replacements={"/srv/reference": str(reference)},
        not_run={},
        systemctl=lambda words: pytest.fail(f"systemctl {words}"),
    )
    book.cwd = ROOT

    book.run_section("1. Stop writes to the reference and take its database")
    book.run_section("2. Set up this service")
    book.run_section("3. Import")
    file.close()

    assert f"Imported 1 new scope(s) and {SOURCES} new Source(s)" in book.log[-1]
