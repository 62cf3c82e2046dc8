"""``manage.py backup_sqlite DEST``: back up the SQLite database while it serves.

Copies the database of ``DATABASE_URL`` (the embedded default:
``var/powercontext.sqlite3``) to ``DEST`` with SQLite's backup API from one
consistent snapshot (``powercontext.backups.sqlite``), printing progress on
stderr and one summary line on stdout. PostgreSQL databases are backed up with
``pg_dump`` instead (docs/deploying.md); this command says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db import connection

from powercontext.backups.exceptions import BackupFailed
from powercontext.backups.sqlite import sqlite_backup
from powercontext.cli import ExplainedCommand, decimal_integer


class Command(ExplainedCommand):
    help = "Back up the SQLite database online (safe in WAL mode) to a new file."
    explanation = """
        Copies the SQLite database of DATABASE_URL (by default
        var/powercontext.sqlite3) to DEST with SQLite's online backup API, from
        one consistent snapshot, while the service keeps serving; then checks
        the copy's integrity. DEST must not exist unless --force is given.
        Progress goes to stderr every --pages-per-step pages, one summary line
        to stdout. A PostgreSQL database is refused: back it up with pg_dump
        (docs/deploying.md, Backups).

          .venv/bin/python manage.py backup_sqlite var/backups/$(date +%F).sqlite3
        """

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("destination", type=Path, help="The backup file to write.")
        parser.add_argument(
            "--force", action="store_true", help="Replace DEST if it exists."
        )
        parser.add_argument(
            "--pages-per-step",
            type=decimal_integer,
            default=1024,
            help="Pages copied per step, between progress lines (default 1024).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if connection.vendor != "sqlite":
            raise CommandError(
                f"DATABASE_URL names a {connection.vendor} database; back it up "
                "with pg_dump (docs/deploying.md, Backups)."
            )
        if options["pages_per_step"] < 1:
            raise CommandError("--pages-per-step must be at least 1.")
        source = Path(connection.settings_dict["NAME"])
        self.stderr.write(f"Backing up {source} to {options['destination']} ...")
        try:
            result = sqlite_backup(
                source=source,
                destination=options["destination"],
                replace=options["force"],
                pages_per_step=options["pages_per_step"],
                progress=self._progress,
            )
        except BackupFailed as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(
            f"Backed up {source} to {result.destination}: {result.pages} pages, "
            f"{result.size_bytes} bytes, integrity check ok."
        )

    def _progress(self, copied: int, total: int) -> None:
        percent = 100 * copied // total if total else 100
        self.stderr.write(f"  {copied} of {total} pages ({percent}%)")
