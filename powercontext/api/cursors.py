"""Signed, expiring, opaque list cursors - one implementation for every list.

A cursor is Django's timestamped HMAC signature (keyed by ``SECRET_KEY``) over a
small JSON payload: the list kind, a binding (a hash of the scope and filters the
walk started with) and the position to resume from. A cursor that was altered, or
that belongs to another list, scope or filter set, is 400 ``invalid_cursor``; one
older than ``POWERCONTEXT_CURSOR_TTL`` seconds is 410 ``cursor_expired``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.conf import settings
from django.core import signing

from .exceptions import CursorExpired, InvalidCursor

_SALT = "powercontext.cursor.v1"


def cursor_binding(*parts: Any) -> str:
    """A short stable digest of what a walk is bound to (scope, filters)."""
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cursor_encode(*, kind: str, binding: str, position: dict[str, Any]) -> str:
    return signing.dumps({"k": kind, "b": binding, "p": position}, salt=_SALT)


def cursor_decode(cursor: str, *, kind: str, binding: str) -> dict[str, Any]:
    """The position stored in ``cursor``; raises InvalidCursor or CursorExpired."""
    try:
        payload = signing.loads(
            cursor, salt=_SALT, max_age=settings.POWERCONTEXT_CURSOR_TTL
        )
    except signing.SignatureExpired:
        raise CursorExpired() from None
    except (signing.BadSignature, ValueError, UnicodeError):
        raise InvalidCursor() from None
    if (
        not isinstance(payload, dict)
        or payload.get("k") != kind
        or payload.get("b") != binding
        or not isinstance(payload.get("p"), dict)
    ):
        raise InvalidCursor()
    return payload["p"]


def next_page(
    rows: list[Any],
    *,
    limit: int,
    kind: str,
    binding: str,
    position_of: Any,
) -> tuple[list[Any], str | None]:
    """Split ``limit + 1`` fetched rows into the page and the cursor for the next one.

    ``position_of(row)`` returns the dict a later ``cursor_decode`` gives back.
    """
    if len(rows) <= limit:
        return rows, None
    page = rows[:limit]
    return page, cursor_encode(
        kind=kind, binding=binding, position=position_of(page[-1])
    )
