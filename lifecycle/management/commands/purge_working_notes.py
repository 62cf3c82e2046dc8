"""``manage.py purge_working_notes --older-than 30d [--scope ID] [--dry-run]``.

Tombstones Working Notes expired or closed longer ago than the age, never held
or cited ones, and erases the notes of envelopes of sessions closed as long ago
(``lifecycle.services.purge``). Safe from cron on several servers at once. Shows
a progress bar on a terminal and prints a one-line summary.
"""

from __future__ import annotations

import argparse
import re
from datetime import timedelta
from typing import Any

from django.core.management.base import CommandError, CommandParser, OutputWrapper
from tqdm import tqdm

from lifecycle.inputs import OLDER_THAN_MAX_SECONDS
from lifecycle.services import purge_run
from powercontext.cli import ExplainedCommand
from powercontext.principals import Principal
from sources.exceptions import ScopeNotFound

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_AGE = re.compile(r"([0-9]+)([smhd])")
# Reserved (cli:...): no token acts under the name the records give the command.
PRINCIPAL = "cli:purge_working_notes"


def age(text: str) -> timedelta:
    """An ``argparse`` type: ASCII digits and one unit of ``s m h d`` (``30d``)."""
    match = _AGE.fullmatch(text)
    seconds = None if match is None else int(match[1]) * _UNITS[match[2]]
    if seconds is None or seconds > OLDER_THAN_MAX_SECONDS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an age such as 90s, 15m, 12h or 30d "
            f"(at most {OLDER_THAN_MAX_SECONDS // 86400}d)"
        )
    return timedelta(seconds=seconds)


class Command(ExplainedCommand):
    help = (
        "Purge working notes expired or closed longer ago than --older-than: "
        "content and metadata become a tombstone (held or cited ones are kept)."
    )
    explanation = """
        For cron: every Working Note that expired, or whose session was closed,
        longer ago than --older-than loses its content and metadata for good and
        stays as a tombstone (identity, position and digests kept, so replays
        still answer the original receipt). Notes under a legal hold and notes a
        committed handoff cites are kept, and so is a note whose text an
        envelope under a legal hold keeps. The same text kept as working notes
        by any other envelope of the note's scope, live or in a revision, is
        erased with the note. The same run clears the working notes of
        envelopes of sessions closed as long ago, and that text in their
        revisions. Works in batches of its own transactions, skipping rows
        another run holds, so two servers may run it at once. Shows a progress
        bar on a terminal and prints one summary line; --dry-run counts what it
        would purge and changes nothing. Exit status 1 for an unknown scope.

        Example: manage.py purge_working_notes --older-than 30d --dry-run
    """

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--older-than", type=age, required=True, help="age, e.g. 30d (s m h d)"
        )
        parser.add_argument("--scope", help="one scope id (default: every scope)")
        parser.add_argument(
            "--dry-run", action="store_true", help="count, change nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        older_than: timedelta = options["older_than"]
        bar = tqdm(
            desc="notes",
            unit="note",
            file=ProgressStream(self.stderr),
            disable=None,  # only on a terminal
        )
        try:
            result = purge_run(
                principal=Principal(PRINCIPAL),
                scope_id=options["scope"],
                older_than=older_than,
                dry_run=options["dry_run"],
                progress=bar.update,
            )
        except ScopeNotFound:
            raise CommandError(f"no scope {options['scope']!r}") from None
        finally:
            bar.close()
        verb = "would purge" if result.dry_run else "purged"
        self.stdout.write(
            f"{result.run_id}: {verb} {result.purged} notes, skipped "
            f"{result.skipped_held} held and {result.skipped_cited} cited; "
            f"envelopes cleared: {result.envelopes_cleared}"
        )


class ProgressStream:
    """The command's stderr as tqdm's file: written as given (tqdm's ``\r`` updates
    need no line ending added) and unstyled, through ``OutputWrapper``'s public
    ``write``; a terminal or not as the command's stderr is."""

    def __init__(self, out: OutputWrapper) -> None:
        self.out = out

    def write(self, text: str) -> None:
        self.out.write(text, style_func=str, ending="")

    def flush(self) -> None:
        self.out.flush()

    def isatty(self) -> bool:
        return self.out.isatty()


__all__ = ["Command", "age"]
