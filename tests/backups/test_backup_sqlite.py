"""``manage.py backup_sqlite``: an online backup of a SQLite database in WAL mode.

The command runs as an operator runs it (a subprocess with its own
``DATABASE_URL``) against a SQLite file that another connection keeps writing to.
Copying page by page without holding a snapshot restarts after every commit of
the writer and never finishes; the command must finish, with a consistent copy.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def backup_sqlite(database: Path | str, *args: str) -> subprocess.CompletedProcess:
    url = database if isinstance(database, str) else f"sqlite:///{database}"
    return subprocess.run(
        [sys.executable, "manage.py", "backup_sqlite", *args],
        cwd=ROOT,
        env={
            "PATH": os.environ["PATH"],
            "POWERCONTEXT_ENV_FILE": "",
            "DJANGO_SETTINGS_MODULE": "powercontext.settings.local",
            "DJANGO_SECRET_KEY": "backup-test-" + "k" * 50,
            "DATABASE_URL": url,
        },
        capture_output=True,
        text=True,
        timeout=60,  # a backup that restarts after every commit never ends
        check=False,
    )


@pytest.fixture
def database(tmp_path: Path) -> Path:
    """A 20 MB SQLite file in WAL mode: 200,000 rows."""
    path = tmp_path / "registry.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, value TEXT)")
        conn.executemany(
            "INSERT INTO item (value) VALUES (?)", (("x" * 80,) for _ in range(200_000))
        )
    conn.close()
    return path


def count(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        (rows,) = conn.execute("SELECT count(*) FROM item").fetchone()
    conn.close()
    return int(rows)


class Writer(threading.Thread):
    """Commits one row after another into ``path`` until stopped."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.commits = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        conn.execute("PRAGMA synchronous=OFF")  # commits as fast as they come
        try:
            while not self.stopped.is_set():
                conn.execute("INSERT INTO item (value) VALUES ('written meanwhile')")
                self.commits += 1
        finally:
            conn.close()


@pytest.fixture
def writer(database: Path) -> Iterator[Writer]:
    thread = Writer(database)
    thread.start()
    try:
        yield thread
    finally:
        thread.stopped.set()
        thread.join(timeout=30)


def test_a_backup_under_constant_writes_finishes_with_a_consistent_copy(
    database: Path, writer: Writer, tmp_path: Path
) -> None:
    rows_before = count(database)
    target = tmp_path / "backups" / "copy.sqlite3"
    target.parent.mkdir()

    result = backup_sqlite(database, str(target), "--pages-per-step", "1")
    commits_during = writer.commits
    writer.stopped.set()
    writer.join(timeout=30)

    assert result.returncode == 0, result.stderr
    assert commits_during > 0
    assert rows_before <= count(target) <= count(database)
    with sqlite3.connect(target) as copy:
        assert copy.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert copy.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    copy.close()
    assert sorted(path.name for path in target.parent.iterdir()) == ["copy.sqlite3"]


def test_progress_goes_to_stderr_and_the_summary_to_stdout(
    database: Path, tmp_path: Path
) -> None:
    target = tmp_path / "copy.sqlite3"

    result = backup_sqlite(database, str(target), "--pages-per-step", "1000")

    progress = [
        (int(copied), int(total))
        for copied, total in re.findall(r"^  (\d+) of (\d+) pages", result.stderr, re.M)
    ]
    total = progress[-1][1]
    assert result.stderr.splitlines()[0] == f"Backing up {database} to {target} ..."
    assert [copied for copied, _ in progress] == sorted(
        {min(step * 1000, total) for step in range(1, -(-total // 1000) + 1)}
    )
    assert result.stderr.splitlines()[-1] == f"  {total} of {total} pages (100%)"
    assert result.stdout == (
        f"Backed up {database} to {target}: {total} pages, "
        f"{total * 4096} bytes, integrity check ok.\n"
    )


def test_force_replaces_an_existing_backup(database: Path, tmp_path: Path) -> None:
    target = tmp_path / "copy.sqlite3"
    target.write_text("an older backup")

    result = backup_sqlite(database, str(target), "--force")

    assert result.returncode == 0, result.stderr
    assert count(target) == 200_000


@pytest.mark.parametrize(
    ("database_url", "destination", "message"),
    [
        (
            "{tmp}/registry.sqlite3",
            "{tmp}/exists.sqlite3",
            "{tmp}/exists.sqlite3 exists; name a new file (or replace it with --force).",
        ),
        (
            "{tmp}/registry.sqlite3",
            "{tmp}/no/such/dir/copy.sqlite3",
            "The directory {tmp}/no/such/dir does not exist.",
        ),
        (
            "{tmp}/missing.sqlite3",
            "{tmp}/copy.sqlite3",
            "There is no SQLite database at {tmp}/missing.sqlite3.",
        ),
        (
            "{tmp}/registry.sqlite3",
            "{tmp}/registry.sqlite3",
            "{tmp}/registry.sqlite3 exists; name a new file (or replace it with --force).",
        ),
        (
            "postgres://postgres@127.0.0.1:5432/nowhere",
            "{tmp}/copy.sqlite3",
            "DATABASE_URL names a postgresql database; back it up with pg_dump "
            "(docs/deploying.md, Backups).",
        ),
    ],
    ids=["exists", "no directory", "no database", "itself", "postgresql"],
)
def test_refusals_are_one_clear_line_and_write_nothing(
    database: Path, tmp_path: Path, database_url: str, destination: str, message: str
) -> None:
    (tmp_path / "exists.sqlite3").write_text("keep me")
    before = sorted(tmp_path.iterdir())
    url = database_url.format(tmp=tmp_path)

    result = backup_sqlite(
        url if url.startswith("postgres") else Path(url),
        destination.format(tmp=tmp_path),
    )

    assert result.returncode == 1
    assert (
        result.stderr.splitlines()[-1]
        == f"CommandError: {message.format(tmp=tmp_path)}"
    )
    assert sorted(tmp_path.iterdir()) == before
    assert (tmp_path / "exists.sqlite3").read_text() == "keep me"


def test_the_copy_itself_with_force_is_refused(database: Path) -> None:
    result = backup_sqlite(database, str(database), "--force")

    assert result.returncode == 1
    assert "The destination is the database itself." in result.stderr
    assert count(database) == 200_000
