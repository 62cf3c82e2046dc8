"""The one exception hierarchy every layer raises; ``powercontext.api.errors``
renders it.

A ``DomainError`` carries its HTTP status, a stable machine-readable ``code``, a
human message and optional ``details``. Services raise subclasses defined in their
app's ``exceptions.py`` or the generic ones here; views never build error bodies.
Errors that only the HTTP layer can meet (authentication, cursors, body limits,
media types) live in ``powercontext.api.exceptions``.
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
        cls, field: str, reason: str, message: str | None = None, **details: Any
    ) -> InvalidRequest:
        return cls(message, details={"field": field, "reason": reason, **details})


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


class Forbidden(DomainError):
    status_code = 403
    code = "forbidden"
    message = "The token holds no grant for this action on this scope."


class NotFound(DomainError):
    status_code = 404
    code = "not_found"
    message = "The requested resource was not found."


class PreconditionFailed(DomainError):
    status_code = 412
    code = "precondition_failed"
    message = "If-Match does not match the current version."
