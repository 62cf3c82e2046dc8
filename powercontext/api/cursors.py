"""Signed, expiring, opaque list cursors - one implementation for every list.

A cursor is Django's timestamped HMAC signature (keyed by ``SECRET_KEY``) over a
small JSON payload: the list kind, a binding (a hash of the scope and filters the
walk started with) and the position to resume from. Verifying also tries every key
in ``SECRET_KEY_FALLBACKS`` (Django's signer reads it), so rotating the key does
not break walks in progress. A cursor that was altered, or
that belongs to another list, scope or filter set, is 400 ``invalid_cursor``; one
older than ``POWERCONTEXT_CURSOR_TTL`` seconds is 410 ``cursor_expired``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.core import signing

from powercontext.pages import Page, Position

from .exceptions import CursorExpired, InvalidCursor
from .responses import StreamedJSONResponse

_SALT = "powercontext.cursor.v1"
Row = TypeVar("Row")


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


@dataclass(frozen=True)
class Walk:
    """One walk through a list: its kind and what it is bound to.

    ``position`` reads the cursor a request sent (None on the first page);
    ``body`` renders a page as ``{"items", "next_cursor"}`` (or another
    name for the items).
    """

    kind: str
    binding: str

    @classmethod
    def of(cls, kind: str, *bound_to: Any) -> Walk:
        return cls(kind, cursor_binding(kind, *bound_to))

    def position(self, cursor: str | None) -> Position | None:
        if cursor is None:
            return None
        return cursor_decode(cursor, kind=self.kind, binding=self.binding)

    def stream(
        self, page: Page[Row], render: Callable[[Row], Any]
    ) -> StreamedJSONResponse:
        """``body`` written item by item (pages of stored content)."""
        return StreamedJSONResponse(
            page.items, render, lambda: {"next_cursor": self.cursor(page)}
        )

    def cursor(self, page: Page[Any]) -> str | None:
        """The cursor of the page after ``page`` (None on the last)."""
        if page.next_position is None:
            return None
        return cursor_encode(
            kind=self.kind, binding=self.binding, position=page.next_position
        )

    def body(
        self, page: Page[Row], render: Callable[[Row], Any], items: str = "items"
    ) -> dict[str, Any]:
        """``{<items>: [...], "next_cursor": ...}``."""
        rows = [render(row) for row in page.items]
        return {items: rows, "next_cursor": self.cursor(page)}
