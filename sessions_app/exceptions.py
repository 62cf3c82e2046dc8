"""Errors raised by the envelope's meta rules, services and selectors.

Every class here is a ``DomainError``: ``powercontext.api.errors`` renders it into
the common envelope. Rejections that concern one meta key name it in
``details.field`` as ``meta.<key>``.
"""

from __future__ import annotations

from typing import Any

from powercontext.exceptions import DomainError, InvalidRequest


class SessionNotFound(DomainError):
    status_code = 404
    code = "session_not_found"
    message = "No envelope exists for this session."


class MetaRuleError(InvalidRequest):
    """A meta key or value that may not be stored (422).

    The read path catches this class to drop a stored value that breaks today's
    rules ("poison drops to unset"); the write path lets it reach the client.
    """


class KeyRuleError(MetaRuleError):
    """A rejection naming one meta key: ``details = {field, reason, ...}``."""

    def __init__(self, key: str, reason: str, message: str, **extra: Any) -> None:
        super().__init__(
            message, details={"field": f"meta.{key}", "reason": reason, **extra}
        )
        self.key = key
        self.reason = reason


class InvalidMetaValue(KeyRuleError):
    """The value has the wrong type, is over its cap, or is not an allowed value."""


class UnknownMetaKey(KeyRuleError):
    code = "unknown_meta_key"


class NotHostKey(KeyRuleError):
    code = "not_host_key"


class NotWorkerKey(KeyRuleError):
    code = "not_worker_key"


class WorkingNotesTooLarge(MetaRuleError):
    """Notes over ``WORKING_NOTES_MAX_BYTES`` after trimming: rejected, never cut.

    ``details`` is ``{bytes, max_bytes}``; when the notes came in as the envelope
    key ``workingNotes`` it also names the field, as every meta rejection does.
    """

    code = "working_notes_too_large"

    def __init__(self, size: int, max_bytes: int, *, field: str | None) -> None:
        details: dict[str, Any] = {"bytes": size, "max_bytes": max_bytes}
        if field is not None:
            details = {"field": field, "reason": "too_large", **details}
        super().__init__(
            f"The working notes are {size} bytes after trimming; "
            f"the limit is {max_bytes}. Shorten them: notes are never truncated.",
            details=details,
        )


class MetaTooLarge(InvalidRequest):
    """The whole meta of a write's result would exceed ``SESSION_META_MAX_BYTES``."""

    def __init__(self, size: int, max_bytes: int) -> None:
        super().__init__(
            f"The envelope meta would be {size} bytes; the limit is {max_bytes}.",
            details={
                "field": "meta",
                "reason": "too_large",
                "bytes": size,
                "max_bytes": max_bytes,
            },
        )
