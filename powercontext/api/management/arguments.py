"""Argument types for our management commands: integers in ASCII digits.

``argparse``'s ``type=int`` is Python's ``int()``, which also reads any Unicode
digit (Arabic-Indic, fullwidth, ...), " 5 " and "1_0". Commands take the wire's
rule instead; ranges are checked in ``handle()``, which ``call_command`` keyword
options also reach.
"""

from __future__ import annotations

import argparse

from powercontext.api.validation import parse_decimal_integer


def decimal_integer(text: str) -> int:
    """An ``argparse`` type: ASCII decimal digits with an optional sign."""
    value = parse_decimal_integer(text)
    if value is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an integer in ASCII digits (0-9)"
        )
    return value
