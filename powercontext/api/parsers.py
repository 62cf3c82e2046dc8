"""The JSON body parser: strict UTF-8, strict JSON, bodies are objects.

Rejected with 422 (never a 500): invalid UTF-8, malformed JSON, ``NaN``/``Infinity``,
duplicate object keys, nesting deep enough to exhaust the decoder, numbers RFC 8785
cannot canonicalise, strings holding NUL or unpaired surrogates, and any top-level
value that is not an object. ``-0.0`` is read as ``0.0`` (``powercontext.jsonvalues``).
"""

from __future__ import annotations

import json
import re
from typing import IO, Any

from rest_framework.parsers import BaseParser

from powercontext.exceptions import RequestValidationError
from powercontext.inputs import check_json_value
from powercontext.jsonvalues import request_float


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
    text = _utf8_text(body)
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
    suspect = _may_hold_a_problem(text)
    del text
    if not isinstance(data, dict):
        raise RequestValidationError.single(
            ["body"], "dict_type", "The request body must be a JSON object."
        )
    if suspect:
        check_json_value(data, ("body",))
    return data


# What can make a decoded value unstorable is visible in the text: a NUL or a
# surrogate only arrives as a ``\u`` escape (strict UTF-8 and JSON admit neither
# raw), an integer outside +-(2^53-1) has 16 digits or more, and a float that is
# not finite has 16 digits or a three-digit exponent. Text without any of these
# cannot fail the walk, so the walk is skipped (false alarms only cost the walk).
_HINTS = r"\\u(?:0000|[dD][89a-fA-F])|[0-9]{16}|[eE][+-]?[0-9]{3}"
_SUSPECT = re.compile(_HINTS)

# The same for the raw bytes of a message ``json.loads`` reads as it is (MCP's
# JSON-RPC), which is more lenient than this parser, so three more hints: ``NaN``
# and ``Infinity`` (read as floats), a surrogate written raw in UTF-8 (bytes are
# read with ``surrogatepass``), and any NUL byte (a message in UTF-16 or UTF-32,
# whose escapes the other hints would not see).
_LENIENT_SUSPECT = re.compile(
    (_HINTS + r"|NaN|Infinity").encode() + rb"|\xed[\xa0-\xbf]|\x00"
)


def _may_hold_a_problem(text: str) -> bool:
    return _SUSPECT.search(text) is not None


def lenient_json_may_hold_a_problem(raw: bytes) -> bool:
    """Whether ``raw``, read by ``json.loads`` as given, may hold a value the walk
    of ``check_json_value`` would refuse."""
    return _LENIENT_SUSPECT.search(raw) is not None


def _utf8_text(body: bytes | IO[bytes]) -> str:
    raw = body if isinstance(body, bytes) else body.read()
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
