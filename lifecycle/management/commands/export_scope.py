"""``manage.py export_scope SCOPE_ID [--session ID] --output FILE``: a bundle.

Writes the bundle of docs/export.md to FILE (through a temporary file beside it,
renamed when complete, so FILE is never a partial bundle) and appends an
``ExportRecord``. A progress bar on a terminal; one summary line on stdout.
"""

from __future__ import annotations

import os
import secrets
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from lifecycle.bundles.export import Selection
from lifecycle.exceptions import SessionNotFound
from lifecycle.services import scope_export
from powercontext.cli import ExplainedCommand
from sources.exceptions import ScopeNotFound

# Reserved (cli:...): no token acts under the name the records give the command.
PRINCIPAL = "cli:export_scope"


class Command(ExplainedCommand):
    help = "Export a scope, or one session of it, as a verifiable bundle."
    explanation = """
        Reads the scope in one snapshot (captures may go on meanwhile) and writes
        its bundle: JSON Lines, the manifest first, every record in a fixed
        order, a trailer with the record count and the chained SHA-256 digest
        (docs/export.md). Tombstones travel as tombstones; tokens and grants do
        not travel. A scope or session under a legal hold is exported like any
        other. Each export is recorded (who, what, when, counts, digest) and shown
        read-only in the admin. FILE appears only when complete. Exit status 1
        with a message for an unknown scope or session.

        Example: manage.py export_scope scp_01J... --output /srv/backup/scope.ndjson
    """

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("scope_id", help="the scope to export")
        parser.add_argument(
            "--session", default=None, metavar="ID", help="export this session only"
        )
        parser.add_argument(
            "--output", required=True, type=Path, help="the bundle file to write"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        started = time.monotonic()
        scope_id, session_id = options["scope_id"], options["session"]
        output: Path = options["output"]
        try:
            lines = scope_export(
                scope_id=scope_id,
                session_id=session_id,
                exported_by=PRINCIPAL,
                via="command",
                request_id="exp" + secrets.token_hex(6),
            )
        except ScopeNotFound:
            raise CommandError(f"No scope {scope_id!r} here.") from None
        except SessionNotFound:
            raise CommandError(
                f"Scope {scope_id!r} has no trace of session {session_id!r}."
            ) from None
        total = sum(Selection(scope_id, session_id).counts().values()) + 2
        partial = output.with_name(f".{output.name}.partial")
        try:
            written = self._write(lines, partial, total)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        os.replace(partial, output)
        elapsed = time.monotonic() - started
        rate = written / elapsed if elapsed > 0 else 0.0
        self.stdout.write(
            f"Exported {written} records of {scope_id}"
            f"{'' if session_id is None else f' session {session_id!r}'} to {output} "
            f"in {elapsed:.1f} s ({rate:.0f} records/s)."
        )

    def _write(self, lines: Iterator[bytes], path: Path, total: int) -> int:
        written = 0
        bar = tqdm(total=total, unit="rec", disable=not sys.stderr.isatty())
        with path.open("wb") as stream, bar:
            for line in lines:
                stream.write(line)
                written += 1
                bar.update(1)
        return written
