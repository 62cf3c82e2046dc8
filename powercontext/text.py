"""Rules for text, numbers and times that every layer shares.

- **Storable text**: no NUL, no unpaired surrogate (api.md 1).
- **Identities** (``scope_id``, ``source_id``, ``session_id`` ...): 1..256
  characters, not blank, compared byte for byte; ``source_id`` also carries no
  leading or trailing whitespace.
- **Numbers** RFC 8785 can canonicalise: finite, integers within +-(2^53-1).
- **Integers on the wire** are ASCII digits: ``\\d``, ``str.isdigit()`` and
  ``int()`` also take any Unicode digit.
- **Times**: RFC 3339 with an explicit offset, written back in UTC with ``Z``,
  within the instants a value digest can hold.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

from powercontext.jsonvalues import MAX_SAFE_INTEGER

IDENTITY_MAX_LENGTH = 256
DECIMAL_INTEGER = re.compile(r"[+-]?[0-9]{1,18}")
RFC3339 = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}"
    r"(?:\.[0-9]{1,6})?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})\Z"
)

# The instants a value digest can hold: it stores a date-time as integer
# microseconds since the epoch, and RFC 8785 only allows integers within +-(2^53-1).
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
EARLIEST_DATETIME = EPOCH - timedelta(microseconds=MAX_SAFE_INTEGER)
LATEST_DATETIME = EPOCH + timedelta(microseconds=MAX_SAFE_INTEGER)


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored as-is (NUL or unpaired surrogate), or None."""
    if "\x00" in value:
        return "must not contain NUL characters"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "must not contain unpaired surrogates"
    return None


def number_problem(value: int | float) -> str | None:
    """Why a JSON number cannot be canonicalised (RFC 8785), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            return "integers must be within +-(2^53-1)"
        return None
    if not math.isfinite(value):
        return "numbers must be finite"
    return None


def utf8_length(text: str) -> int:
    return len(text.encode("utf-8"))


def parse_decimal_integer(text: str) -> int | None:
    """``text`` as an integer if it is 1..18 ASCII digits with an optional sign."""
    return int(text) if DECIMAL_INTEGER.fullmatch(text) else None


def format_datetime(value: datetime) -> str:
    """UTC RFC 3339 with ``Z`` (microseconds only when present)."""
    text = value.astimezone(UTC).isoformat()
    return text.removesuffix("+00:00") + "Z"


def epoch_microseconds(value: datetime) -> int:
    """An aware datetime as integer microseconds since the Unix epoch (UTC)."""
    delta = value - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
