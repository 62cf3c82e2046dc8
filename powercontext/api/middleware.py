"""Middleware for every response: request id, request log line, the body's length,
body size limit, and the 503 for views outside DRF when the database cannot be
reached."""

from __future__ import annotations

import logging
import re
import secrets
import threading
import time
from collections.abc import Callable
from functools import partial

from corsheaders.middleware import CorsMiddleware
from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse

from powercontext import heap, metrics
from powercontext.db import replica
from powercontext.principals import Principal

from .errors import as_domain_error, error_response
from .exceptions import BadRequest, RequestTooLarge, ServerBusy
from .logging import current_request_id, log_safe
from .observability import QueryCount, route_of, traceparent_of

REQUEST_ID_HEADER = "X-PowerContext-Request-ID"
# RFC 9110 8.6: no Content-Length on a 1xx or a 204; a 304 carries none of its own.
_NO_CONTENT_LENGTH = frozenset({204, 304})
# RFC 9110 8.6: Content-Length = 1*DIGIT, and DIGIT is ASCII 0-9 only.
_CONTENT_LENGTH = re.compile(r"[0-9]+")
logger = logging.getLogger("powercontext.request")


def request_id_of(request: HttpRequest) -> str:
    """The id minted for ``request`` (a DRF ``Request`` proxies the attribute)."""
    return request.request_id  # type: ignore[attr-defined]


def principal_name_of(request: HttpRequest) -> str:
    """The authenticated principal's name, or ``-``.

    DRF sets the user it authenticated on Django's request too (its public
    ``Request.user`` setter), so the principal is there once a view has run. An
    unevaluated lazy user (the admin's) is left alone: ``type()`` does not load it.
    """
    user = getattr(request, "user", None)
    return user.name if type(user) is Principal else "-"


class CorsWhenConfiguredMiddleware(CorsMiddleware):
    """django-cors-headers, loaded only when some origin is allowed.

    With none (the default) it added nothing a browser could use, yet built every
    request's header dict and patched every response's ``Vary``: about 4% of a
    capture's CPU (docs/performance.md).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        if not settings.CORS_ALLOWED_ORIGINS:  # the only way origins are allowed
            raise MiddlewareNotUsed
        super().__init__(get_response)


class RequestIdMiddleware:
    """Mints a fresh 16-hex request id, tags logs with it, writes one line per request.

    A request id sent by the caller is ignored: ids are ours, so a log search by id
    can never be poisoned by a client.

    The line and the metrics are written when the server closes the response
    (PEP 3333: once it has taken the body), as Django's test client does too,
    chained after Django's own closing work; ``duration_ms`` is the time to produce
    the answer and leaves them out. granian sends the answer (a chunked one's last
    chunk) only once ``close()`` has returned, so a caller waits for them - some
    40 us, about 5% of a capture's CPU in-process; the worker of decision 0030 sent
    first.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = secrets.token_hex(8)
        replica.request_started()
        request.request_id = request_id  # type: ignore[attr-defined]
        token = current_request_id.set(request_id)
        started = time.perf_counter()
        try:
            with QueryCount().counting() as queries:
                response = self.get_response(request)
            response[REQUEST_ID_HEADER] = request_id
            content_length_set(response)
            seconds = time.perf_counter() - started
            _run_after_close(
                response,
                partial(self.after_sending, request, response, seconds, queries),
            )
            return response
        finally:
            current_request_id.reset(token)

    @classmethod
    def after_sending(
        cls,
        request: HttpRequest,
        response: HttpResponse,
        seconds: float,
        queries: QueryCount,
    ) -> None:
        """Django ignores what a closer raises: a failure here is logged instead."""
        token = current_request_id.set(request_id_of(request))
        try:
            cls.request_done(request, response, seconds, queries)
        except Exception:
            logger.exception("Writing the request line or the metrics failed")
        finally:
            current_request_id.reset(token)

    @staticmethod
    def request_done(
        request: HttpRequest,
        response: HttpResponse,
        seconds: float,
        queries: QueryCount,
    ) -> None:
        """The request line (structured fields for JSON logs) and the metrics."""
        method, route = log_safe(request.method or "-"), route_of(request)
        principal = log_safe(principal_name_of(request))
        fields = {
            "method": method,
            "path": log_safe(request.path),
            "route": route,
            "status": response.status_code,
            "duration_ms": round(seconds * 1000, 1),
            "principal": principal,
            "queries": queries.count,
        }
        traceparent = traceparent_of(request)
        if traceparent is not None:
            fields["traceparent"] = traceparent
        logger.info(
            "%s %s %s %.1fms principal=%s",
            method,
            fields["path"],
            response.status_code,
            fields["duration_ms"],
            principal,
            extra=fields,
        )
        metrics.request_observed(route, method, response.status_code, seconds)


class BodySizeLimitMiddleware:
    """Answers 413 before reading a body larger than ``POWERCONTEXT_MAX_BODY_BYTES``,
    and 503 ``server_busy`` for a large body when this worker is busy with others.

    A declared ``Content-Length`` is checked without reading; one that is not ASCII
    digits is a 400 (RFC 9112 6.3) - Django's ``int()`` would read other Unicode
    digits. A chunked body reaches it with the length of what was read of it, at
    most the limit plus one byte (``powercontext.api.wsgi_input``), so an
    oversized upload never sits in memory whole.

    A body of ``POWERCONTEXT_LARGE_BODY_BYTES`` or more may take a thread for a
    second or more. At most ``POWERCONTEXT_LARGE_BODY_CONCURRENCY`` of them (by
    default one fewer than the worker's threads) are handled at once per worker;
    another is refused at once, unread, with ``Retry-After: 1``. So a thread is
    always left for small requests and the health probes, however many large
    bodies arrive (docs/api.md: no input starves the other callers).

    What the requests that read a body leave for the cyclic collector is collected
    once their bodies add up to ``POWERCONTEXT_LARGE_BODY_BYTES`` - after every
    large body - and the freed memory handed back (``powercontext.heap``).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.large_bodies = threading.BoundedSemaphore(
            settings.POWERCONTEXT_LARGE_BODY_CONCURRENCY
        )
        self.garbage = heap.RequestGarbage(settings.POWERCONTEXT_LARGE_BODY_BYTES)
        heap.large_blocks_go_straight_back()

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.POWERCONTEXT_MAX_BODY_BYTES
        declared = request.META.get("CONTENT_LENGTH")
        if declared:
            if not _CONTENT_LENGTH.fullmatch(declared):
                return error_response(
                    BadRequest("Content-Length must be ASCII decimal digits.")
                )
            if int(declared) > limit:
                return error_response(RequestTooLarge(_too_large_message(limit)))
        size = int(request.META.get("CONTENT_LENGTH") or 0)
        if size < settings.POWERCONTEXT_LARGE_BODY_BYTES:
            response = self.get_response(request)
        elif self.large_bodies.acquire(blocking=False):
            try:
                response = self.get_response(request)
            finally:
                self.large_bodies.release()
        else:
            return error_response(ServerBusy())
        if size:
            _run_after_close(response, partial(self.garbage.body_closed, size))
        return response


def content_length_set(response: HttpResponse) -> None:
    """Say how long a body held in memory is, as Django's ``CommonMiddleware`` does.

    Without a length granian frames the answer in chunks, and a client knows it has
    all of it only when the empty last chunk arrives, which granian sends after the
    response's ``close()`` (0.16 ms after the body at c=1, measured). With it the
    answer is one piece of known size, for a client and for a proxy in front. None
    on a 1xx, a 204 or a 304 (RFC 9110 8.6: a 304's would describe the 200's body);
    a streamed answer (a bundle) keeps its chunks: its size is known only at its end.
    """
    if (
        response.streaming
        or response.status_code < 200
        or response.status_code in _NO_CONTENT_LENGTH
        or response.has_header("Content-Length")
    ):
        return
    response["Content-Length"] = str(len(response.content))


def _run_after_close(response: HttpResponse, after: Callable[[], None]) -> None:
    """Run ``after`` when ``response`` is closed, after what its ``close()`` does.

    The public way in: the server calls ``close()`` once the answer is sent, so the
    response's own method is wrapped on this one object. The wrapper removes itself
    when it has run: it refers to the response, and a response that referred back to
    it would wait for the cyclic garbage collector, its body with it.
    """
    close = response.close

    def close_then_after() -> None:
        try:
            close()
        finally:
            vars(response).pop("close", None)
            after()

    response.close = close_then_after  # type: ignore[method-assign]


def _too_large_message(limit: int) -> str:
    return f"The request body exceeds the limit of {limit} bytes."


class DatabaseUnavailableMiddleware:
    """Answers ``503 unavailable`` when a view outside DRF cannot reach the database.

    DRF views map database outages in their exception handler; Django would turn
    the same failure in any other view (the admin) into a 500. Other exceptions
    keep Django's handling.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(
        self, request: HttpRequest, exception: Exception
    ) -> HttpResponse | None:
        if isinstance(exception, (OperationalError, InterfaceError)):
            return error_response(as_domain_error(exception))
        return None
