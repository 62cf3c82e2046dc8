"""JSON values as the service reads them back from storage.

Every JSON value a client may send is finite and its integers lie within
+-(2^53-1) (api.md 1): the numbers RFC 8785 can canonicalise. Two stores print
some of those numbers differently from how they came in: PostgreSQL's ``jsonb``
keeps numbers as ``numeric`` and prints the float ``1e20`` as
``100000000000000000000``, and RFC 8785 canonical text (the stored form of a
Source's content and of handoff content) does the same. Python's ``json`` reads
such text as an integer outside the safe range - a value the API refuses on the
way back in, and one an envelope's type-strict comparison sees as different.

So every stored JSON text is read with ``stored_json_loads`` or, for JSON
columns, ``StoredJSONDecoder``: an integer literal outside the safe range can only
have been written from a float (input refuses such integers), and is read as that
float. The float's shortest repr was what the store received, so the float read
back is bit-for-bit the one sent. The other difference between stores, ``-0.0``
(``numeric`` has no negative zero), is removed on the way in: the request parser
reads ``-0.0`` as ``0.0``, which RFC 8785 already treats as the same number.
See docs/decisions/0004-json-round-trip.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_SAFE_INTEGER = 2**53 - 1


def _stored_int(text: str) -> int | float:
    value = int(text)
    if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        return value
    return float(text)


class StoredJSONDecoder(json.JSONDecoder):
    """``json`` decoding of stored JSON: unsafe integer literals are floats."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("parse_int", _stored_int)
        super().__init__(**kwargs)


_DECODER = StoredJSONDecoder()


def stored_json_loads(text: str) -> Any:
    """Decode JSON text the service stored (see the module docstring)."""
    return _DECODER.decode(text)


def request_float(text: str) -> float:
    """A float literal of a request body; ``-0.0`` is read as ``0.0``.

    The two zeros are one number to RFC 8785; PostgreSQL's ``numeric`` cannot
    even store the negative one, so both stores keep ``0.0``.
    """
    return float(text) or 0.0


# A JSON string (skipped as a whole) or a number token.
_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?', re.DOTALL
)
_SIXTEEN_DIGITS = re.compile(r"[0-9]{16}")


def wire_json_text(stored: str) -> str:
    """Stored JSON text as it goes on the wire: exactly ``stored``, except that an
    integer literal outside +-(2^53-1) - a float RFC 8785 or jsonb printed without
    exponent - is written as that float (``1e+20``), which every client reads
    back as the number it sent. Text without a run of 16 digits is returned as is
    (the common case: one regular-expression scan)."""
    if _SIXTEEN_DIGITS.search(stored) is None:
        return stored
    return _TOKEN.sub(_as_wire_number, stored)


def _as_wire_number(match: re.Match[str]) -> str:
    token = match.group(0)
    if token[0] == '"' or not token.lstrip("-").isdigit():
        return token
    value = int(token)
    if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        return token
    return repr(float(token))


class RawJSON:
    """A stored JSON text to put into an answer as it is, never decoded and encoded
    again (the HTTP layer splices it in: ``powercontext.api.responses``)."""

    __slots__ = ("text",)

    def __init__(self, stored: str) -> None:
        self.text = wire_json_text(stored)
