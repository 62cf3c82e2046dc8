"""The one error renderer: every error body is ``{"error": {code, message, details}}``.

``api_exception_handler`` is DRF's ``EXCEPTION_HANDLER``; ``not_found_view``,
``server_error_view`` and the middleware reuse ``error_response`` for paths DRF
never sees, so a client meets exactly one shape whatever failed.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse
from rest_framework import exceptions as drf_exceptions

from powercontext import exceptions as kernel
from powercontext.exceptions import DomainError
from powercontext.inputs import error_item

from . import exceptions as api_exceptions

logger = logging.getLogger("powercontext.errors")


def error_body(error: DomainError) -> dict[str, Any]:
    """The envelope of ``error``: ``{"error": {code, message, details}}``."""
    return {
        "error": {
            "code": error.code,
            "message": error.message,
            "details": error.details,
        }
    }


def error_text(body: dict[str, Any]) -> str:
    """An envelope as the JSON text every error answer carries."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def error_response(error: DomainError) -> HttpResponse:
    """Render ``error`` as the envelope with its status and headers."""
    response = HttpResponse(
        error_text(error_body(error)),
        status=error.status_code,
        content_type="application/json",
    )
    for name, value in error.headers.items():
        response[name] = value
    return response


def _messages(detail: Any) -> Iterator[str]:
    if isinstance(detail, dict):
        detail = list(detail.values())
    if isinstance(detail, list):
        for child in detail:
            yield from _messages(child)
    else:
        yield str(detail)


def _translate_drf(exc: drf_exceptions.APIException) -> DomainError:
    if isinstance(exc, drf_exceptions.ValidationError):
        # Inputs are validated by pydantic models (``powercontext.inputs``); only a
        # DRF component could still raise this: its messages, as value errors.
        return kernel.RequestValidationError(
            [error_item(("body",), "value_error", m) for m in _messages(exc.detail)]
        )
    if isinstance(
        exc, (drf_exceptions.NotAuthenticated, drf_exceptions.AuthenticationFailed)
    ):
        message = (
            None
            if isinstance(exc, drf_exceptions.NotAuthenticated)
            else str(exc.detail)
        )
        return api_exceptions.Unauthorized(message)
    if isinstance(exc, drf_exceptions.PermissionDenied):
        return kernel.Forbidden()
    if isinstance(exc, drf_exceptions.NotFound):
        return kernel.NotFound()
    if isinstance(exc, drf_exceptions.MethodNotAllowed):
        return api_exceptions.MethodNotAllowed()
    if isinstance(exc, drf_exceptions.UnsupportedMediaType):
        return api_exceptions.UnsupportedMediaType()
    if isinstance(exc, drf_exceptions.ParseError):
        return kernel.RequestValidationError.single(
            ["body"], "json_invalid", "The request body is not valid JSON."
        )
    if isinstance(exc, drf_exceptions.Throttled):
        return api_exceptions.RateLimited(
            headers={"Retry-After": str(int(getattr(exc, "wait", None) or 1))}
        )
    return api_exceptions.InternalError()


def as_domain_error(exc: BaseException) -> DomainError:
    """Map any exception to the DomainError that describes it to a client."""
    if isinstance(exc, DomainError):
        return exc
    if isinstance(exc, Http404):
        return kernel.NotFound()
    if isinstance(exc, drf_exceptions.APIException):
        return _translate_drf(exc)
    if isinstance(exc, (OperationalError, InterfaceError)):
        logger.warning("database unavailable: %s", exc)
        return api_exceptions.ServiceUnavailable()
    if isinstance(exc, DatabaseError):
        logger.exception("unexpected database error")
        return api_exceptions.InternalError()
    logger.exception("unexpected error")
    return api_exceptions.InternalError()


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> HttpResponse:
    """DRF's exception handler: every exception a view raises becomes the envelope."""
    return error_response(as_domain_error(exc))


def not_found_view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """Catch-all route and ``handler404``: unknown paths answer the envelope."""
    return error_response(kernel.NotFound("No such route: check the method and path."))


def server_error_view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """``handler500`` for failures outside DRF views (Django already logged them)."""
    return error_response(api_exceptions.InternalError())


def bad_request_view(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """``handler400`` (e.g. a disallowed Host header, a suspicious operation)."""
    return error_response(
        api_exceptions.BadRequest("The request could not be processed.")
    )


def permission_denied_view(
    request: HttpRequest, *args: Any, **kwargs: Any
) -> HttpResponse:
    """``handler403`` outside DRF (e.g. CSRF failure in the admin)."""
    return error_response(kernel.Forbidden("Forbidden."))
