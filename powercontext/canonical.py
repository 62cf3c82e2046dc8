"""Canonical JSON (RFC 8785) and the digests built on it.

RFC 8785 fixes key order, whitespace and number formatting, so ``{"a": 1.0}`` and
``{"a":1}`` canonicalise to the same bytes while ``true`` and ``1`` stay distinct.

The serialiser here produces exactly the bytes of the ``rfc8785`` package (a
property test compares them) while keeping every request's cost bounded
(docs/operations.md): it walks the value with an explicit stack, so nesting as deep
as the JSON parser admits cannot exhaust Python's recursion limit, it copies no
container, and it writes strings with the C JSON encoder, whose escaping is the
one RFC 8785 prescribes (``"``, ``\\`` and U+0000..U+001F, short forms where
JSON has them, ``\\u00xx`` otherwise; everything else as UTF-8). Numbers are
written as ECMAScript writes them (RFC 8785 3.2.2.3).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import Any

from powercontext.jsonvalues import MAX_SAFE_INTEGER

_string = json.encoder.encode_basestring


class CanonicalizationError(ValueError):
    """A value RFC 8785 cannot represent (the request layer refuses these first)."""


class CanonicalTooLarge(ValueError):
    """The canonical JSON of a value is over the size it was allowed.

    ``size`` is its exact UTF-8 length: the rest of the value was measured
    without being kept.
    """

    def __init__(self, size: int) -> None:
        super().__init__(f"the canonical JSON is {size} bytes")
        self.size = size


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 bytes of ``value`` (finite numbers, safe integers, str keys)."""
    try:
        return canonical_text(value).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CanonicalizationError("a string holds an unpaired surrogate") from exc


def canonical_text(value: Any, *, max_bytes: int | None = None) -> str:
    """``canonical_json`` as text (what the registry stores). Its strings must be
    storable (no unpaired surrogate): the request layer refuses others first.

    With ``max_bytes``, a text over that many UTF-8 bytes raises
    ``CanonicalTooLarge``; a nested value stops being kept once it passes the
    limit, so refusing a large value costs a few times the limit, never the
    whole text.
    """
    if isinstance(value, str):
        text = str(_string(value))
    elif value is None:
        text = "null"
    elif isinstance(value, dict) and _flat(value):
        # Sorting ASCII keys by code point is sorting them by UTF-16 code unit,
        # and these scalars are written by json exactly as RFC 8785 writes them.
        text = json.dumps(
            value, ensure_ascii=False, sort_keys=True, separators=(",", ":")
        )
    else:
        out = io.StringIO()
        _write(value, out, max_chars=max_bytes)
        text = out.getvalue()
    if max_bytes is not None and len(text) > max_bytes // 4:
        size = utf8_size(text)
        if size > max_bytes:
            raise CanonicalTooLarge(size)
    return text


def utf8_size(text: str) -> int:
    """The UTF-8 length of ``text`` (without encoding it when it is ASCII)."""
    return len(text) if text.isascii() else len(text.encode("utf-8"))


def canonical_sha256(value: Any) -> str:
    """Hex SHA-256 of the canonical JSON of ``value``."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


def _write(value: Any, out: io.StringIO, *, max_chars: int | None = None) -> None:
    """Write ``value`` depth-first; containers are entered through iterators kept
    on an explicit stack, so nesting costs memory, never recursion.

    With ``max_chars``, once ``out`` holds more characters than that (so more
    UTF-8 bytes too) what it holds is measured and dropped every few thousand
    values, and ``CanonicalTooLarge`` is raised with the exact size at the end.
    """
    stack: list[Iterator[Any]] = [iter((value,))]
    closers: list[str] = [""]
    first: list[bool] = [True]
    measured: int | None = None  # bytes already dropped, once over the limit
    countdown = _CHECK_EVERY
    write = out.write
    while stack:
        countdown -= 1
        if not countdown:
            countdown = _CHECK_EVERY
            if measured is not None or (
                max_chars is not None and out.tell() > max_chars
            ):
                measured = (measured or 0) + _drained(out)
        node = next(stack[-1], _END)
        if node is _END:
            stack.pop()
            write(closers.pop())
            first.pop()
            continue
        if not first[-1]:
            write(",")
        first[-1] = False
        if isinstance(node, _Key):
            write(node.text)
            node = node.value
        if isinstance(node, dict):
            write("{")
            stack.append(_members(node))
            closers.append("}")
            first.append(True)
        elif isinstance(node, list | tuple):
            if len(node) > _FLAT_LIST_MIN and _flat_values(node):
                # A long list of flat scalars is written in one call, by json.
                write(json.dumps(node, ensure_ascii=False, separators=(",", ":")))
                continue
            write("[")
            stack.append(iter(node))
            closers.append("]")
            first.append(True)
        else:
            write(_scalar(node))
    if measured is not None:
        raise CanonicalTooLarge(measured + _drained(out))


_CHECK_EVERY = 4096
_FLAT_LIST_MIN = 16


def _drained(out: io.StringIO) -> int:
    """The UTF-8 size of what ``out`` holds, which is then dropped."""
    size = utf8_size(out.getvalue())
    out.seek(0)
    out.truncate()
    return size


_FLAT_SCALARS = (str, bool, type(None))


def _flat(obj: dict[Any, Any]) -> bool:
    """Whether ``obj`` has only ASCII string keys and flat values."""
    for key in obj:
        if type(key) is not str or not key.isascii():
            return False
    return _flat_values(obj.values())


def _flat_values(items: Iterable[Any]) -> bool:
    """Whether every item is a string, boolean, null or safe integer - what json
    writes exactly as RFC 8785 does (not floats: json writes those as Python,
    not ECMAScript)."""
    for item in items:
        if type(item) is int:
            if abs(item) > MAX_SAFE_INTEGER:
                return False
        elif not isinstance(item, _FLAT_SCALARS):
            return False
    return True


class _Key:
    """An object member: its key already written as ``"key":``, then its value."""

    __slots__ = ("text", "value")

    def __init__(self, text: str, value: Any) -> None:
        self.text = text
        self.value = value


def _members(obj: dict[str, Any]) -> Iterator[_Key]:
    """The members of ``obj`` in RFC 8785 order: keys by their UTF-16 code units."""
    for key in sorted(obj, key=_utf16_order):
        yield _Key(_string(key) + ":", obj[key])


def _utf16_order(key: Any) -> bytes:
    if not isinstance(key, str):
        raise CanonicalizationError(f"object keys must be strings, not {key!r}")
    try:
        return key.encode("utf-16-be")
    except UnicodeEncodeError as exc:
        raise CanonicalizationError("a key holds an unpaired surrogate") from exc


_END = object()


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if abs(value) > MAX_SAFE_INTEGER:
            raise CanonicalizationError(f"{value} is outside +-(2^53-1)")
        return str(int(value))
    if isinstance(value, float):
        return ecmascript_number(value)
    if isinstance(value, str):
        return _string(value)
    raise CanonicalizationError(f"{type(value).__name__} is not a JSON value")


def ecmascript_number(value: float) -> str:
    """``value`` as ECMAScript's Number::toString writes it (ECMA-262 7.1.12.1).

    The shortest digits that read back as ``value`` (Python's ``repr``), placed
    as ECMAScript places them: plain notation for exponents -6 < n <= 21,
    scientific (``1e+21``, ``1.5e-7``) otherwise. ``-0.0`` is ``0``.
    """
    if not math.isfinite(value):
        raise CanonicalizationError(f"{value} is not a finite number")
    if value == 0:
        return "0"
    if value < 0:
        return "-" + ecmascript_number(-value)
    _, digit_tuple, exponent = Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    assert isinstance(exponent, int)
    # value = 0.<digits> * 10^n
    n = exponent + len(digit_tuple)
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * -n + digits
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return f"{mantissa}e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"
