"""Errors raised by the registry's services and selectors."""

from powercontext.exceptions import DomainError


class ScopeNotFound(DomainError):
    status_code = 404
    code = "scope_not_found"
    message = "The requested Scope was not found."


class ScopeIdempotencyConflict(DomainError):
    status_code = 409
    code = "scope_idempotency_conflict"
    message = "The Scope creation key identifies different parameters."


class SourceNotFound(DomainError):
    status_code = 404
    code = "source_not_found"
    message = "The requested Source was not found."


class SourceConflict(DomainError):
    status_code = 409
    code = "source_conflict"
    message = "The Source identity has different content."


class CaptureRejected(DomainError):
    """A domain rule refused a capture (422).

    ``reason`` is the rule's code, in the attempt log and in ``details.reason``;
    ``detail_reason`` replaces it in the details where the reference words the
    reason differently (the reserved receipt schema).
    """

    status_code = 422
    code = "invalid_request"
    message = "The request is invalid."

    def __init__(
        self,
        *,
        reason: str,
        field: str,
        detail_reason: str | None = None,
        message: str | None = None,
        **extra: str,
    ) -> None:
        details = {"field": field, "reason": detail_reason or reason, **extra}
        super().__init__(message, details=details)
        self.reason = reason


class SessionClosed(DomainError):
    status_code = 409
    code = "session_closed"
    message = (
        "The session is closed: it takes no new working notes and no envelope "
        "writes. Start a new session id."
    )
