"""The one exception hierarchy every layer raises; ``errors.py`` renders it.

A ``DomainError`` carries its HTTP status, a stable machine-readable ``code``, a
human message and optional ``details``. Services raise subclasses defined in their
app's ``exceptions.py``; views and serializers never build error bodies.
"""

from __future__ import annotations

from typing import Any, ClassVar


class DomainError(Exception):
    """Base of every error the API reports on purpose."""

    status_code: ClassVar[int] = 400
    code: ClassVar[str] = "invalid_request"
    message: str = "The request is invalid."

    def __init__(
        self,
        message: str | None = None,
        *,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.message = message or type(self).message
        self.details = details
        self.headers = headers or {}
        super().__init__(self.message)


class InvalidRequest(DomainError):
    """A schema violation or a domain rule that rejects the request (422)."""

    status_code = 422
    code = "invalid_request"
    message = "The request violates the API contract."

    @classmethod
    def for_field(
        cls, field: str, reason: str, message: str | None = None
    ) -> InvalidRequest:
        return cls(message, details={"field": field, "reason": reason})


class RequestValidationError(InvalidRequest):
    """Schema errors: ``details.errors`` lists ``{type, loc, msg}`` items."""

    def __init__(
        self, errors: list[dict[str, Any]], message: str | None = None
    ) -> None:
        super().__init__(message, details={"errors": errors})
        self.errors = errors

    @classmethod
    def single(
        cls, loc: list[str | int], type_: str, msg: str
    ) -> RequestValidationError:
        return cls([{"type": type_, "loc": loc, "msg": msg}])


class BadRequest(DomainError):
    """A query parameter out of range where the reference answers 400."""

    status_code = 400
    code = "invalid_request"
    message = "The request query is invalid."


class InvalidCursor(DomainError):
    status_code = 400
    code = "invalid_cursor"
    message = "The pagination cursor is invalid."


class CursorExpired(DomainError):
    status_code = 410
    code = "cursor_expired"
    message = "The pagination cursor has expired."


class Unauthorized(DomainError):
    status_code = 401
    code = "unauthorized"
    message = "A valid bearer token is required."

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message, headers={"WWW-Authenticate": "Bearer"})


class Forbidden(DomainError):
    status_code = 403
    code = "forbidden"
    message = "The token holds no grant for this action on this scope."


class NotFound(DomainError):
    status_code = 404
    code = "not_found"
    message = "The requested resource was not found."


class MethodNotAllowed(DomainError):
    status_code = 405
    code = "method_not_allowed"
    message = "The method is not allowed on this resource."


class PreconditionFailed(DomainError):
    status_code = 412
    code = "precondition_failed"
    message = "If-Match does not match the current version."


class RequestTooLarge(DomainError):
    status_code = 413
    code = "request_too_large"
    message = "The request body is too large."


class UnsupportedMediaType(DomainError):
    status_code = 415
    code = "unsupported_media_type"
    message = "Request bodies must be JSON (Content-Type: application/json)."


class RateLimited(DomainError):
    status_code = 429
    code = "rate_limited"
    message = "Too many requests; retry after the time in Retry-After."


class ServiceUnavailable(DomainError):
    status_code = 503
    code = "unavailable"
    message = (
        "The database could not be reached; the outcome is unknown, "
        "retry the identical request."
    )


class InternalError(DomainError):
    status_code = 500
    code = "internal_error"
    message = "The server failed to process the request."
