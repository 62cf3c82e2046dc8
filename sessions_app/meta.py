"""The envelope's meta rules, in one place (docs/sessions-meta.md).

The reserved-key table is ``meta_keys.RESERVED_KEYS``. The whole meta is capped
at ``SESSION_META_MAX_BYTES``, measured as the UTF-8 bytes of its compact JSON.

One sanitizer serves both directions:

- on every **write**, ``sanitize_value`` returns the value to store (``None`` when
  the value clears the key) or raises a ``MetaRuleError`` naming ``details.field``;
- on every **read**, ``sanitize_stored`` applies the same function to what the
  database holds and drops whatever breaks today's rules - returned as if unset,
  logged, never an error ("poison drops to unset"). Writes start from the
  sanitized meta, so poison is never carried forward.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from django.conf import settings

from powercontext.jsonvalues import MAX_SAFE_INTEGER
from powercontext.text import number_problem, text_problem, utf8_length

from .exceptions import (
    InvalidMetaValue,
    MetaRuleError,
    MetaTooLarge,
    WorkingNotesTooLarge,
)
from .meta_keys import (
    JSON_TEXT_KINDS,
    RESERVED_KEYS,
    WORKING_NOTES_KEY,
    KeyRule,
    ValueKind,
    known_owner,
)

logger = logging.getLogger("powercontext.sessions")

Scalar = str | int | float | bool


# --- The sanitizer --------------------------------------------------------------------


def sanitize_value(key: str, value: Any) -> Scalar | None:
    """The value to store for ``key``, or ``None`` when ``value`` clears the key.

    ``null`` and ``""`` clear any key; ``workingNotes`` is trimmed first, so notes
    that are only whitespace clear it too. Raises ``UnknownMetaKey`` for a key
    outside the table without the ``x-`` prefix, ``WorkingNotesTooLarge`` for notes
    over their cap and ``InvalidMetaValue`` for any other value breaking its rule.
    """
    if value is None or value == "":
        return None
    rule = RESERVED_KEYS.get(key)
    if rule is None:
        known_owner(key)
        return _host_defined_scalar(key, value)
    if rule.kind is ValueKind.NOTES:
        return sanitize_working_notes(value, field=f"meta.{key}")
    if rule.kind is ValueKind.NON_NEGATIVE_INTEGER:
        return _non_negative_integer(rule, value)
    if not isinstance(value, str) or text_problem(value):
        raise _invalid(rule, value, "wrong_type")
    if rule.kind is ValueKind.CHOICE:
        if value not in rule.choices:
            raise _invalid(rule, value, "not_allowed")
        return value
    _check_cap(rule, value)
    if rule.kind in JSON_TEXT_KINDS and not _holds_json(value, rule.kind):
        raise _invalid(rule, value, "invalid_json_text")
    return value


def sanitize_working_notes(value: Any, *, field: str | None = None) -> str | None:
    """Trimmed notes, or ``None`` for "no notes" (``None`` or blank).

    The single notes rule (docs/api.md, "Working notes"): a string, trimmed, at most
    ``WORKING_NOTES_MAX_BYTES`` UTF-8 bytes after trimming. Over the cap raises
    ``WorkingNotesTooLarge`` (never truncated); another type raises
    ``InvalidMetaValue``. ``field`` names the notes in the error when they came in
    as an envelope key.
    """
    if value is None:
        return None
    if not isinstance(value, str) or text_problem(value):
        raise InvalidMetaValue(
            WORKING_NOTES_KEY,
            "wrong_type",
            f"meta.{WORKING_NOTES_KEY} must be a string.",
        )
    notes = value.strip()
    if not notes:
        return None
    size = utf8_length(notes)
    max_bytes = settings.WORKING_NOTES_MAX_BYTES
    if size > max_bytes:
        raise WorkingNotesTooLarge(size, max_bytes, field=field)
    return notes


def sanitize_stored(meta: Any, *, scope_id: str, session_id: str) -> dict[str, Scalar]:
    """The readable meta of a stored envelope: every key passed through the sanitizer.

    A key or value breaking today's rules is left out and logged with its scope,
    session and key (the value itself is never logged). Never raises.
    """
    if not isinstance(meta, dict):
        logger.warning(
            "envelope meta is not an object; read as empty: scope=%r session=%r",
            scope_id,
            session_id,
        )
        return {}
    readable: dict[str, Scalar] = {}
    for key, value in meta.items():
        clean = sanitize_stored_value(
            key, value, scope_id=scope_id, session_id=session_id
        )
        if clean is not None:
            readable[key] = clean
    return readable


def sanitize_stored_value(
    key: str, value: Any, *, scope_id: str, session_id: str
) -> Scalar | None:
    """One stored value through the sanitizer; poison is logged and read as unset."""
    try:
        return sanitize_value(key, value)
    except MetaRuleError as rejected:
        logger.warning(
            "dropped a stored envelope meta value that breaks today's rules: "
            "scope=%r session=%r key=%r code=%s reason=%s",
            scope_id,
            session_id,
            key,
            rejected.code,
            (rejected.details or {}).get("reason"),
        )
        return None


# --- The whole meta -------------------------------------------------------------------


def meta_size(meta: Mapping[str, Scalar]) -> int:
    """UTF-8 bytes of the compact JSON of ``meta`` (no spaces, non-ASCII as-is)."""
    return utf8_length(json.dumps(meta, ensure_ascii=False, separators=(",", ":")))


def check_meta_size(meta: Mapping[str, Scalar]) -> None:
    """Raise ``MetaTooLarge`` when ``meta`` exceeds ``SESSION_META_MAX_BYTES``."""
    size = meta_size(meta)
    max_bytes = settings.SESSION_META_MAX_BYTES
    if size > max_bytes:
        raise MetaTooLarge(size, max_bytes)


def same_value(left: Scalar | None, right: Scalar | None) -> bool:
    """Equality keeping JSON types apart: ``true`` is not ``1``, ``1`` not ``1.0``."""
    return type(left) is type(right) and left == right


def same_meta(left: Mapping[str, Scalar], right: Mapping[str, Scalar]) -> bool:
    return left.keys() == right.keys() and all(
        same_value(value, right[key]) for key, value in left.items()
    )


# --- Rules for one value --------------------------------------------------------------


def _invalid(rule: KeyRule, value: Any, reason: str) -> InvalidMetaValue:
    return InvalidMetaValue(
        rule.key, reason, f"meta.{rule.key} must be {rule.describe()}."
    )


def _check_cap(rule: KeyRule, value: str) -> None:
    max_bytes = rule.max_bytes()
    size = utf8_length(value)
    if max_bytes is not None and size > max_bytes:
        raise InvalidMetaValue(
            rule.key,
            "too_large",
            f"meta.{rule.key} is {size} bytes; the limit is {max_bytes}.",
            bytes=size,
            max_bytes=max_bytes,
        )


def _non_negative_integer(rule: KeyRule, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid(rule, value, "wrong_type")
    if not 0 <= value <= MAX_SAFE_INTEGER:
        raise _invalid(rule, value, "out_of_range")
    return value


def _host_defined_scalar(key: str, value: Any) -> Scalar:
    problem: str | None
    if isinstance(value, str):
        problem = text_problem(value)
    elif isinstance(value, bool):
        problem = None
    elif isinstance(value, (int, float)):
        problem = number_problem(value)
    else:
        problem = "must be a string, number or boolean"
    if problem:
        raise InvalidMetaValue(
            key, "not_scalar", f"meta.{key} {problem}; meta values are flat scalars."
        )
    scalar: Scalar = value
    return scalar


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _holds_json(text: str, kind: ValueKind) -> bool:
    """Whether ``text`` is strict JSON of the shape ``kind`` names."""
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return False
    if kind is ValueKind.JSON_STRING_ARRAY:
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    return isinstance(value, dict)
