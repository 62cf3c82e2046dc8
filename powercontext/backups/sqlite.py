"""An online, consistent copy of a SQLite database in WAL mode.

SQLite's backup API copies the database page by page. Between two steps another
connection may commit, and the copy then starts over - under a steady stream of
captures it never finishes. So the source connection holds one read transaction
for the whole copy: in WAL mode that pins a snapshot (the database as of the
first step) without blocking writers, and every step copies from it. The copy is
written beside the destination, checked with ``PRAGMA integrity_check``, switched
to the rollback journal (one self-contained file) and renamed into place, so a
failed backup never leaves a file under the destination's name.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .exceptions import BackupFailed


@dataclass(frozen=True)
class BackupResult:
    destination: Path
    pages: int
    page_size: int

    @property
    def size_bytes(self) -> int:
        return self.pages * self.page_size


Progress = Callable[[int, int], None]


def sqlite_backup(
    *,
    source: Path,
    destination: Path,
    replace: bool = False,
    pages_per_step: int = 1024,
    progress: Progress | None = None,
) -> BackupResult:
    """Copy the SQLite database ``source`` to ``destination`` while it serves.

    Calls ``progress(copied_pages, total_pages)`` after every step. Raises
    ``BackupFailed`` - with nothing left at ``destination`` - when the source is
    missing or unreadable, the destination exists (unless ``replace``) or its
    directory does not, or SQLite fails or finds the copy corrupt. Takes no lock
    that blocks writers; holds one read snapshot of ``source`` while it runs.
    """
    _paths_check(source, destination, replace=replace)
    partial = destination.with_name(
        f".{destination.name}.partial-{secrets.token_hex(4)}"
    )
    try:
        result = _copy(source, partial, pages_per_step, progress)
        os.replace(partial, destination)
    except sqlite3.Error as exc:
        raise BackupFailed(f"SQLite could not back up {source}: {exc}") from None
    finally:
        partial.unlink(missing_ok=True)
    return BackupResult(destination, result.pages, result.page_size)


def _paths_check(source: Path, destination: Path, *, replace: bool) -> None:
    if not source.is_file():
        raise BackupFailed(f"There is no SQLite database at {source}.")
    if not destination.parent.is_dir():
        raise BackupFailed(f"The directory {destination.parent} does not exist.")
    if destination.exists() and not replace:
        raise BackupFailed(
            f"{destination} exists; name a new file (or replace it with --force)."
        )
    if destination.resolve() == source.resolve():
        raise BackupFailed("The destination is the database itself.")


def _copy(
    source: Path, target: Path, pages_per_step: int, progress: Progress | None
) -> BackupResult:
    def report(status: int, remaining: int, total: int) -> None:
        if progress is not None:
            progress(total - remaining, total)

    reader = sqlite3.connect(f"{source.as_uri()}?mode=ro", uri=True)
    reader.isolation_level = None  # we open the snapshot's transaction ourselves
    writer = sqlite3.connect(target)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM sqlite_master").fetchone()  # the snapshot
        reader.backup(writer, pages=pages_per_step, progress=report)
        reader.execute("COMMIT")
        pages = writer.execute("PRAGMA page_count").fetchone()[0]
        page_size = writer.execute("PRAGMA page_size").fetchone()[0]
        writer.execute("PRAGMA journal_mode=DELETE")
        (verdict,) = writer.execute("PRAGMA integrity_check").fetchone()
        if verdict != "ok":
            raise BackupFailed(f"The copy of {source} is corrupt: {verdict}")
    finally:
        writer.close()
        with contextlib.suppress(sqlite3.Error):
            reader.close()
    with target.open("rb") as copied:
        os.fsync(copied.fileno())
    return BackupResult(target, pages, page_size)
