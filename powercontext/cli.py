"""Argument types for our management commands: numbers in ASCII digits.

``argparse``'s ``type=int`` is Python's ``int()``, which also reads any Unicode
digit (Arabic-Indic, fullwidth, ...), " 5 " and "1_0". Commands take the wire's
rule instead; ranges are checked in ``handle()``, which ``call_command`` keyword
options also reach.
"""

from __future__ import annotations

import argparse
import re
from fractions import Fraction

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
