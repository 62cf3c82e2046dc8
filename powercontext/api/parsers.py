"""The JSON body parser: strict UTF-8, strict JSON, bodies are objects.

Rejected with 422 (never a 500): invalid UTF-8, malformed JSON, ``NaN``/``Infinity``,
duplicate object keys, nesting deep enough to exhaust the decoder, numbers RFC 8785
cannot canonicalise, strings holding NUL or unpaired surrogates, and any top-level
value that is not an object. ``-0.0`` is read as ``0.0`` (``powercontext.jsonvalues``).
Refused with 413 before it is read: a body holding more JSON nodes than reading it
within the memory bound allows (``check_json_nodes``).
"""

from __future__ import annotations

import json
import re
from typing import IO, Any

from rest_framework.parsers import BaseParser

from powercontext.exceptions import RequestValidationError
from powercontext.inputs import check_json_value
from powercontext.jsonvalues import request_float
from powercontext.shape import BODY_FACTOR, REQUEST_OVERHEAD_BYTES

from .exceptions import RequestTooLarge


class _DuplicateKey(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _DuplicateKey("duplicate object key")
    return result


def parse_json_object(body: bytes | IO[bytes]) -> dict[str, Any]:
    """Decode ``body`` (bytes, or a stream read here) into a JSON object or raise
    a 422 ``RequestValidationError``.

    Given the stream, no caller holds the raw bytes: they are dropped once decoded,
    and the text once parsed, so at most one copy of the body is alive beside the
    parsed value (docs/operations.md).
    """
    raw = body if isinstance(body, bytes) else body.read()
    check_json_nodes(raw)
    suspect = json_may_hold_a_problem(raw)
    text = _utf8_text(raw)
    del raw
    try:
        data = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_float=request_float,
            object_pairs_hook=_object_without_duplicates,
        )
    except _DuplicateKey:
        raise RequestValidationError.single(
            ["body"], "json_invalid", "The request body repeats an object key."
        ) from None
    except (ValueError, RecursionError):
        raise RequestValidationError.single(
            ["body"], "json_invalid", "The request body is not valid JSON."
        ) from None
    del text
    if not isinstance(data, dict):
        raise RequestValidationError.single(
            ["body"], "dict_type", "The request body must be a JSON object."
        )
    if suspect:
        check_json_value(data, ("body",))
    return data


# What reading a body may cost (docs/operations.md, "Memory"): at most 32 times its
# bytes plus 32 MiB. CPython's json makes an object for every JSON object and
# array, and an object's first member allocates its key table; each of these
# "nodes" costs up to ~112 bytes resident (a one-item list is the list, its item
# array and the slot that holds it), so a body dense in them costs up to 44 times
# its bytes to parse (``[[[[[[[[[[]]]]]]]]]]`` repeated), where strings and numbers
# cost at most 13. So a body may hold at most as many nodes as its share of the bound
# pays for at 128 bytes each, after four copies of the body itself (the server's
# buffer, the bytes, the text, and one for the rest of the request): 7 nodes for
# every 32 bytes plus 262,144. Counted as the ``[``, ``{`` and ``:`` outside
# strings; a body of 335,544 bytes or fewer cannot hold more, so is not counted.
NODE_COST_BYTES = 128
_BODY_COPIES = 4
_NODE_MARKS = (b"[", b"{", b":")
_JSON_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
# From a point outside strings: what lies outside strings and the whole strings,
# up to the first string the slice's end cuts. Possessive: no backtracking.
_OUTSIDE_AND_WHOLE_STRINGS = re.compile(
    rb'(?:[^"]++|"(?:[^"\\]++|\\.)*+")*+', re.DOTALL
)
# Strings are cut out of a slice of the body at a time, so the copy is bounded.
_CUT_SLICE_BYTES = 256 * 1024


def max_json_nodes(size: int) -> int:
    """How many JSON nodes (objects, arrays, object members) a body of ``size``
    bytes may hold."""
    budget = (BODY_FACTOR - _BODY_COPIES) * size + REQUEST_OVERHEAD_BYTES
    return budget // NODE_COST_BYTES


def check_json_nodes(raw: bytes) -> None:
    """Refuse (413) the body ``raw`` when it holds more JSON nodes than
    ``max_json_nodes`` allows, before any of it is decoded.

    The marks are first counted in the whole body (a fast upper bound); only when
    that is over the limit are they counted again outside strings, so a long text
    full of brackets or colons passes.
    """
    limit = max_json_nodes(len(raw))
    if len(raw) <= limit:
        return
    marks = _marks(raw)
    if marks <= limit:
        return
    nodes = json_nodes(raw)
    if nodes > limit:
        raise RequestTooLarge(
            f"The request body holds {nodes} JSON objects, arrays and members; "
            f"a body of {len(raw)} bytes may hold at most {limit}. "
            "Send less structure in one request.",
            details={"reason": "too_many_nodes", "nodes": nodes, "max_nodes": limit},
        )


def _marks(raw: bytes, start: int = 0, end: int | None = None) -> int:
    return sum(raw.count(mark, start, end) for mark in _NODE_MARKS)


def json_nodes(raw: bytes, *, slice_bytes: int = _CUT_SLICE_BYTES) -> int:
    """The JSON nodes of the text ``raw``: its objects, arrays and object members,
    counted as the ``[``, ``{`` and ``:`` outside its strings, a slice at a time,
    cut where no string is open, its strings cut out."""
    marks, position, size = 0, 0, len(raw)
    while position < size:
        found = _OUTSIDE_AND_WHOLE_STRINGS.match(raw, position, position + slice_bytes)
        end = position if found is None else found.end()  # it matches "" at least
        if end > position:
            marks += _marks(_JSON_STRING.sub(b"", raw[position:end]))
            position = end
            continue
        # A string longer than a slice starts here: it holds no node.
        string = _JSON_STRING.match(raw, position)
        if string is None:
            return marks  # nor does an unterminated one: parsing stops there
        position = string.end()
    return marks


# What can make a decoded value unstorable is visible in the body's bytes: a NUL or
# a surrogate only arrives as a ``\u`` escape (strict UTF-8 and JSON admit neither
# raw), an integer outside +-(2^53-1) has 16 digits or more, and a float that is
# not finite has 16 digits or a three-digit exponent. Bytes without any of these
# cannot fail the walk, so the walk is skipped (false alarms only cost the walk).
# As regular expressions: ``\\u(?:0000|[dD][89a-fA-F])``, ``[0-9]{16}`` and
# ``[eE][+-]?[0-9]{3}`` - but an expression tried at every byte costs about 10 us
# on a small note's body, so the numbers are looked for as plain substrings of the
# body's "shape": every digit written as 0, every exponent letter as e, every sign
# as +, everything else as a space (UTF-8 never uses an ASCII byte inside another
# character, so the bytes' hints are the text's).
_ESCAPE_HINT = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")
_NUMBER_SHAPES = bytes(
    ord("0")
    if 0x30 <= byte <= 0x39
    else ord("e")
    if byte in b"eE"
    else ord("+")
    if byte in b"+-"
    else ord(" ")
    for byte in range(256)
)
_NUMBER_HINTS = (b"0" * 16, b"e000", b"e+000")
# The shape is made a slice at a time, each overlapping the one before by the
# longest hint, so a large body is never copied whole.
_SHAPE_SLICE_BYTES = 64 * 1024
_LONGEST_HINT = max(len(hint) for hint in _NUMBER_HINTS)

# The same for the raw bytes of a message ``json.loads`` reads as it is (MCP's
# JSON-RPC), which is more lenient than this parser, so three more hints: ``NaN``
# and ``Infinity`` (read as floats), a surrogate written raw in UTF-8 (bytes are
# read with ``surrogatepass``), and any NUL byte (a message in UTF-16 or UTF-32,
# whose escapes the other hints would not see).
_LENIENT_LITERALS = (b"NaN", b"Infinity", b"\x00")
_RAW_SURROGATE = re.compile(rb"\xed[\xa0-\xbf]")


def json_may_hold_a_problem(raw: bytes) -> bool:
    """Whether the JSON text ``raw`` (strict UTF-8) may hold a value the walk of
    ``check_json_value`` would refuse."""
    if b"\\u" in raw and _ESCAPE_HINT.search(raw) is not None:
        return True
    step = _SHAPE_SLICE_BYTES
    for start in range(0, len(raw), step):
        shape = raw[max(start - _LONGEST_HINT, 0) : start + step].translate(
            _NUMBER_SHAPES
        )
        if any(hint in shape for hint in _NUMBER_HINTS):
            return True
    return False


def lenient_json_may_hold_a_problem(raw: bytes) -> bool:
    """Whether ``raw``, read by ``json.loads`` as given, may hold a value the walk
    of ``check_json_value`` would refuse."""
    return (
        json_may_hold_a_problem(raw)
        or any(literal in raw for literal in _LENIENT_LITERALS)
        or (b"\xed" in raw and _RAW_SURROGATE.search(raw) is not None)
    )


def _utf8_text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise RequestValidationError.single(
            ["body"], "json_invalid", "The request body is not valid UTF-8."
        ) from None


class StrictJSONParser(BaseParser):
    media_type = "application/json"

    def parse(
        self,
        stream: IO[bytes],
        media_type: str | None = None,
        parser_context: Any = None,
    ) -> dict[str, Any]:
        return parse_json_object(stream)
