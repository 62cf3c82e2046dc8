"""``manage.py import_powercontext PATH``: bring a PowerContext 1.4.1 database over.

Reads the reference server's SQLite file (read-only) and imports its scopes and
every content Source at its original position (docs/migrating.md). First the
whole file is checked against itself (``sources.importing.checks``): a row the
API would refuse, a gap in the positions, a parent cycle - each is listed (file,
table, key, rule) and nothing is written. Then three passes, each with a
progress bar on stderr: *plan* compares the file with this registry and writes
nothing; *import* writes what is new; *verify* re-reads every Source of the
file here and compares - import and verify in one transaction, so a difference
rolls everything back. Any conflict - an identity holding another value
here, a position taken by another identity, a scope with other fields - is
listed and nothing is written. A re-run imports nothing twice. ``--dry-run``
stops after the plan. The summary is the last lines of stdout.
"""

from __future__ import annotations

import secrets
import sqlite3
import time
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db import IntegrityError
from tqdm import tqdm

from powercontext.cli import ExplainedCommand
from powercontext.principals import STATIC_TOKEN_PRINCIPAL
from sources.importing.checks import file_problems
from sources.importing.plan import CONFLICTS_SHOWN, ImportPlan, import_plan
from sources.importing.reference import ReferenceDatabase, ReferenceUnreadable
from sources.importing.writer import ImportMismatch, import_write


class Command(ExplainedCommand):
    help = "Import a PowerContext 1.4.1 SQLite database (scopes and Sources)."
    explanation = """
        Moves a team from the reference server: reads its SQLite file read-only
        and imports every scope (parents first) and every content Source and
        Working Note at its original position, with its digests, note fields and
        expiry, so the reference's own client replays its requests against this
        service with identical receipts. Three passes with a progress bar each:
        plan (writes nothing), import (what is new), verify (re-reads every
        imported Source and compares it with the file). Any conflict - an
        identity or position already holding something else, a scope created
        differently - is listed and nothing at all is written. A re-run imports
        nothing twice. Exit status 1 with a message on a conflict, an unreadable
        file or a failed verification. docs/migrating.md walks through it.

        Example: manage.py import_powercontext /srv/pc/powercontext.db --dry-run
    """

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="the reference's powercontext.db")
        parser.add_argument(
            "--dry-run", action="store_true", help="plan and report; write nothing"
        )
        parser.add_argument(
            "--scope",
            action="append",
            default=None,
            metavar="ID",
            help="import only this scope (repeatable)",
        )
        parser.add_argument(
            "--principal",
            default=STATIC_TOKEN_PRINCIPAL,
            help=(
                "who the imported scopes and Sources are recorded as created by; "
                "a scope's creation replays for this principal only "
                f"(default {STATIC_TOKEN_PRINCIPAL!r}: the reference's static token)"
            ),
        )
        parser.add_argument(
            "--no-progress", action="store_true", help="no progress bars (for logs)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            self._import(options)
        except sqlite3.Error as exc:  # the file's tables are not the reference's
            raise CommandError(
                f"{options['path']} cannot be read as a PowerContext 1.4.1 database "
                f"({exc}); nothing was written."
            ) from None

    def _import(self, options: dict[str, Any]) -> None:
        started = time.monotonic()
        try:
            reference = ReferenceDatabase(options["path"])
        except ReferenceUnreadable as exc:
            raise CommandError(str(exc)) from None
        self._refuse_invalid_rows(reference, options["path"])
        principal = options["principal"]
        only = set(options["scope"]) if options["scope"] else None
        quiet = options["no_progress"]
        with self._bar("plan", reference.source_count(only), quiet) as bar:
            plan = import_plan(
                reference, only=only, principal=principal, advance=bar.update
            )
        self._report_plan(plan)
        if plan.conflicts:
            raise CommandError(
                f"{len(plan.conflicts)} conflict(s); nothing was written."
            )
        if options["dry_run"]:
            self.stdout.write("Dry run: nothing was written.")
            return
        try:
            scopes, written = import_write(
                reference,
                plan,
                principal=principal,
                request_id="imp" + secrets.token_hex(6),
                progress=lambda desc, total: self._bar(desc, total, quiet),
            )
        except IntegrityError as exc:
            raise CommandError(
                f"A Source was captured here while importing ({exc}); nothing was "
                "written. Run the import again to see the conflict."
            ) from None
        except ImportMismatch as failed:
            for mismatch in failed.mismatches[:CONFLICTS_SHOWN]:
                self.stderr.write(
                    f"  mismatch {mismatch.scope_id} / {mismatch.source_id!r}: "
                    f"{mismatch.reason}"
                )
            raise CommandError(
                f"Verification found {len(failed.mismatches)} difference(s) between "
                "the file and this registry; nothing was written."
            ) from None
        elapsed = time.monotonic() - started
        rate = written / elapsed if elapsed > 0 else 0.0
        self.stdout.write(
            f"Imported {scopes} new scope(s) and {written} new Source(s) "
            f"in {elapsed:.1f} s ({rate:.0f} Sources/s); "
            f"{plan.file_sources - written} were already here."
        )
        self.stdout.write(
            f"Verified {plan.file_sources} Source(s) in {len(plan.scopes)} scope(s): "
            "identical to the file."
        )

    def _refuse_invalid_rows(self, reference: ReferenceDatabase, path: Path) -> None:
        """Check the whole file before the plan; list what is wrong and stop."""
        problems = list(file_problems(reference))
        for problem in problems[:CONFLICTS_SHOWN]:
            self.stderr.write(f"  invalid {path}: {problem}")
        if len(problems) > CONFLICTS_SHOWN:
            self.stderr.write(
                f"  ... and {len(problems) - CONFLICTS_SHOWN} more invalid rows"
            )
        if problems:
            raise CommandError(
                f"{path}: {len(problems)} invalid row(s), each one the API would "
                "refuse; nothing was written."
            )

    def _bar(self, desc: str, total: int | None, quiet: bool) -> tqdm:
        return tqdm(total=total, desc=desc, unit="src", disable=quiet, smoothing=0.1)

    def _report_plan(self, plan: ImportPlan) -> None:
        for scope_plan in plan.scopes:
            state = "exists" if scope_plan.exists else "new"
            self.stdout.write(
                f"  scope {scope_plan.scope.scope_id} ({state}): "
                f"{scope_plan.sources} Sources, {scope_plan.new} new, "
                f"positions up to {scope_plan.last_position}"
            )
        for unsupported in plan.unsupported:
            self.stderr.write(
                f"  skipped {unsupported.scope_id} / {unsupported.source_type} / "
                f"{unsupported.source_id!r}: {unsupported.reason}"
            )
        for conflict in plan.conflicts[:CONFLICTS_SHOWN]:
            self.stderr.write(f"  conflict {conflict}")
        if len(plan.conflicts) > CONFLICTS_SHOWN:
            self.stderr.write(
                f"  ... and {len(plan.conflicts) - CONFLICTS_SHOWN} more conflicts"
            )
        self.stdout.write(
            f"Plan: {len(plan.scopes)} scope(s), {plan.file_sources} Source(s) in the "
            f"file, {plan.new_sources} new, {len(plan.conflicts)} conflict(s), "
            f"{len(plan.unsupported)} skipped."
        )
