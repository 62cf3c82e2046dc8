"""Remembering: the one writer of Memory records (``remember_memory``)."""

from __future__ import annotations

import secrets
import unicodedata

from django.db import transaction
from django.utils import timezone

from powercontext.exceptions import RequestValidationError
from powercontext.principals import Principal
from powercontext.text import utf8_length
from sources.models import MemoryRecord
from sources.selectors import scope_require

# The reference's bound on a remembered text, in UTF-8 bytes after normalization.
MEMORY_TEXT_MAX_BYTES = 8192


def memory_text_normalize(*, kind: str, text: str) -> str:
    """``text`` as stored: surrounding whitespace removed, then Unicode NFC.

    Raises ``RequestValidationError`` (422 ``invalid_request``) when ``kind`` is
    blank, or the normalized text is empty or longer than 8192 UTF-8 bytes, with
    the reference's error items (whose ``loc`` names the field alone: it checks
    them after the request was parsed).
    """
    errors = []
    if not kind.strip():
        errors.append(_value_error("kind", "memory kind must not be blank"))
    normalized = unicodedata.normalize("NFC", text.strip())
    if not normalized:
        errors.append(_value_error("text", "memory entry text must be non-empty"))
    elif utf8_length(normalized) > MEMORY_TEXT_MAX_BYTES:
        errors.append(
            _value_error(
                "text",
                f"memory entry text must not exceed {MEMORY_TEXT_MAX_BYTES} "
                "UTF-8 bytes",
            )
        )
    if errors:
        raise RequestValidationError(errors)
    return normalized


def _value_error(field: str, message: str) -> dict[str, object]:
    return {"type": "value_error", "loc": [field], "msg": f"Value error, {message}"}


def memory_remember(
    *,
    principal: Principal,
    scope_id: str,
    kind: str,
    text: str,
    reason: str | None,
    request_id: str,
) -> MemoryRecord:
    """Store one new Memory record in ``scope_id`` and return it.

    Every call stores a new record with a new ``artifact_id`` (the reference's
    remember is not idempotent either). Raises ``ScopeNotFound``, then
    ``RequestValidationError`` for a blank kind or text (``memory_text_normalize``).
    """
    scope_require(scope_id=scope_id)
    normalized = memory_text_normalize(kind=kind, text=text)
    with transaction.atomic(durable=True):
        return MemoryRecord.objects.create(
            scope_id=scope_id,
            artifact_id="art_" + secrets.token_hex(16),
            kind=kind,
            text=normalized,
            reason=reason,
            created_at=timezone.now(),
            created_by=principal.name,
            request_id=request_id,
        )
