"""What our management commands share: help that explains, progress lines, and
argument types for numbers in ASCII digits.

``argparse``'s ``type=int`` is Python's ``int()``, which also reads any Unicode
digit (Arabic-Indic, fullwidth, ...), " 5 " and "1_0". Commands take the wire's
rule instead; ranges are checked in ``handle()``, which ``call_command`` keyword
options also reach.
"""

from __future__ import annotations

import argparse
import re
import textwrap
from fractions import Fraction
from typing import Any

from django.core.management.base import BaseCommand, CommandParser, DjangoHelpFormatter

from powercontext.text import parse_decimal_integer


def decimal_integer(text: str) -> int:
    """An ``argparse`` type: ASCII decimal digits with an optional sign."""
    value = parse_decimal_integer(text)
    if value is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an integer in ASCII digits (0-9)"
        )
    return value


_DECIMAL_FRACTION = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]+)?|\.[0-9]+)")


def decimal_fraction(text: str) -> Fraction:
    """An ``argparse`` type: a decimal number ("0.7", ".25", "1"), exactly.

    A ``Fraction``, not a float: 0.7 is then exactly 7/10 and shares of a count
    come out exact.
    """
    if not _DECIMAL_FRACTION.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a decimal number in ASCII digits (e.g. 0.25)"
        )
    return Fraction(text)


class ExplainedHelpFormatter(DjangoHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Django's help layout, with the explanation kept as written (paragraphs,
    indented examples) instead of run together into one paragraph."""


class ExplainedCommand(BaseCommand):
    """A management command whose ``--help`` explains it.

    ``help`` is the one-line summary; ``explanation`` follows the options in
    ``--help``: what the command does and changes, when to run it, what it prints
    and how it fails, with examples. ``tests/kernel/test_commands.py`` holds every
    command of the project to this and to a help text on each option.
    """

    explanation = ""

    def create_parser(
        self, prog_name: str, subcommand: str, **kwargs: Any
    ) -> CommandParser:
        kwargs.setdefault("formatter_class", ExplainedHelpFormatter)
        kwargs.setdefault("epilog", textwrap.dedent(self.explanation).strip() or None)
        return super().create_parser(prog_name, subcommand, **kwargs)


class ProgressLines:
    """Progress of long work as lines on a command's stderr: ``0 of N`` first,
    then about every 5% of N and the last, so a log keeps a short trail."""

    def __init__(self, stream: Any, *, unit: str) -> None:
        self.stream = stream
        self.unit = unit

    def __call__(self, done: int, total: int) -> None:
        if done and done != total and done % max(1, total // 20):
            return
        percent = 100 * done // total if total else 100
        self.stream.write(f"  {done} of {total} {self.unit} ({percent}%)")
