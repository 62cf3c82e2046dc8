"""``manage.py import_bundle FILE [--dry-run]``: restore a scope from its bundle."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db import DatabaseError
from tqdm import tqdm

from lifecycle.bundles.restore import (
    BundleRefused,
    RestoreMismatch,
    bundle_restore,
    restore_plan,
)
from powercontext.cli import ExplainedCommand

SHOWN = 20


class Command(ExplainedCommand):
    help = "Restore a scope from a bundle: everything checked first, all or nothing."
    explanation = """
        Three passes over FILE: check (every line, offline, as verify_bundle
        does), plan (against this instance, writing nothing: the scope must not
        exist here, the scopes it names must, its creation key and its hold and
        redaction ids must be free, a purge run already here must be the same
        run), write (every row in one transaction, then the scope's rows are
        counted against the manifest). Any problem is listed by line and nothing
        at all is written. After a restore every read answers as on the
        instance that exported it, replays return their original receipts and
        the next capture takes the next position. Tokens and grants do not
        travel: grant access here (manage.py createtoken). A session bundle is
        refused (it holds part of a scope). --dry-run stops after the plan.

        Example: manage.py import_bundle /srv/backup/scope.ndjson --dry-run
    """

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="the bundle file")
        parser.add_argument(
            "--dry-run", action="store_true", help="check and plan; write nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        started = time.monotonic()
        try:
            with self._bar("check") as bar:
                plan = restore_plan(path, advance=bar.update)
        except OSError as exc:
            raise CommandError(f"{path} cannot be read ({exc.strerror}).") from None
        except BundleRefused as refused:
            self._refuse(path, refused)
        scope_id, lines = plan.scope.scope_id, plan.checked.lines
        if options["dry_run"]:
            self.stdout.write(
                f"Dry run: {path} restores scope {scope_id} ({lines} lines); "
                "nothing was written."
            )
            return
        try:
            with self._bar("restore", lines) as bar:
                counts = bundle_restore(path, plan, advance=bar.update)
        except (DatabaseError, RestoreMismatch) as exc:
            raise CommandError(
                f"{path}: the restore was rolled back ({exc}); nothing was written."
            ) from None
        elapsed = time.monotonic() - started
        rate = lines / elapsed if elapsed > 0 else 0.0
        self.stdout.write(
            f"Restored scope {scope_id} from {path}: {lines} records "
            f"({counts['source']} Sources) in {elapsed:.1f} s ({rate:.0f} records/s)."
        )

    def _refuse(self, path: Path, refused: BundleRefused) -> None:
        for problem in refused.problems[:SHOWN]:
            self.stderr.write(f"  {path}: {problem}")
        if len(refused.problems) > SHOWN:
            self.stderr.write(f"  ... and {len(refused.problems) - SHOWN} more")
        raise CommandError(
            f"{path}: {len(refused.problems)} problem(s), the first at line "
            f"{min(p.line for p in refused.problems)}; nothing was written."
        )

    def _bar(self, desc: str, total: int | None = None) -> tqdm:
        return tqdm(total=total, desc=desc, unit="rec", disable=not sys.stderr.isatty())
