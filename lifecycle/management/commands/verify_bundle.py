"""``manage.py verify_bundle FILE``: a bundle checked offline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from lifecycle.bundles.format import BundleChecker
from lifecycle.bundles.restore import file_lines
from powercontext.cli import ExplainedCommand

SHOWN = 20


class Command(ExplainedCommand):
    help = "Check a bundle's manifest, records, digests and chain (no database)."
    explanation = """
        Reads FILE line by line and checks, without a database: every line is
        canonical JSON of a known record kind with exactly its fields; the
        manifest comes first and the trailer last, the kinds in bundle order;
        every Source's content digest and value digest, every envelope value's
        and handoff revision's digest; each line's chained digest over the line
        before; the trailer's record count and the manifest's counts per kind
        (docs/export.md). A flipped byte, a dropped, swapped or added line and a
        truncated file are all found. Prints the problems (the first 20) and
        exits 1 naming the first bad line; prints the summary when all is well.

        Example: manage.py verify_bundle /srv/backup/scope.ndjson
    """

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="the bundle file")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["path"]
        checker = BundleChecker()
        try:
            for number, raw in file_lines(path):
                checker.feed(number, raw)
        except OSError as exc:
            raise CommandError(f"{path} cannot be read ({exc.strerror}).") from None
        checked = checker.finish()
        for problem in checked.problems[:SHOWN]:
            self.stderr.write(f"  {path}: {problem}")
        if len(checked.problems) > SHOWN:
            self.stderr.write(f"  ... and {len(checked.problems) - SHOWN} more")
        if checked.problems:
            raise CommandError(
                f"{path}: not a valid bundle; the first bad line is line "
                f"{checked.first_bad_line}."
            )
        manifest = checked.manifest
        assert manifest is not None
        session = (
            "" if manifest.session_id is None else f" session {manifest.session_id!r}"
        )
        self.stdout.write(
            f"{path}: valid bundle of scope {manifest.scope_id}{session}, "
            f"{checked.lines} lines, chained digest {checked.chain}."
        )
