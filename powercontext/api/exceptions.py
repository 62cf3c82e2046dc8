"""Errors only the HTTP layer meets: authentication, query values, cursors, body
limits, media types, methods, rate limits, outages.

They extend the kernel's ``DomainError`` (``powercontext.exceptions``), so the one
renderer (``errors.py``) gives them the same envelope.
"""

from __future__ import annotations

from powercontext.exceptions import DomainError


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


class MethodNotAllowed(DomainError):
    status_code = 405
    code = "method_not_allowed"
    message = "The method is not allowed on this resource."


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


class ServerBusy(DomainError):
    """Every large-body slot of this worker is taken (``BodySizeLimitMiddleware``)."""

    status_code = 503
    code = "server_busy"
    message = (
        "This server is handling as many large requests as it may at once; "
        "retry after the time in Retry-After. Nothing was done."
    )

    def __init__(self) -> None:
        super().__init__(headers={"Retry-After": "1"})
