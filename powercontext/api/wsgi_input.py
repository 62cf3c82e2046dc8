"""The WSGI layer around Django: a chunked request body gets a length.

A body sent with ``Transfer-Encoding: chunked`` reaches the application without a
``Content-Length``; the server marks such an input ``wsgi.input_terminated``
(a WSGI extension gunicorn and others set: reading to the end is safe). Django
reads no more than ``CONTENT_LENGTH`` bytes of a request, so without one the body
would silently read as empty.

Here, before Django sees the request, such a body is read up to the body limit
plus one byte and handed on as an ordinary body of known length: what the
request's own ``Content-Length`` would have said. The limit itself is enforced
once, by ``BodySizeLimitMiddleware``, which answers 413 for a length over it -
an oversized chunked upload is never read whole. Only PEP 3333's environ is used.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import IO, Any

from django.conf import settings

WSGIApplication = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
READ_BYTES = 64 * 1024
BODYLESS_METHODS = ("GET", "HEAD")


class ChunkedBodyLength:
    """A WSGI application that gives ``application`` chunked bodies with a length."""

    def __init__(self, application: WSGIApplication) -> None:
        self.application = application

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        if (
            not environ.get("CONTENT_LENGTH")
            and environ.get("wsgi.input_terminated")
            and environ.get("REQUEST_METHOD") not in BODYLESS_METHODS
        ):
            limit = settings.POWERCONTEXT_MAX_BODY_BYTES
            body = read_at_most(environ["wsgi.input"], limit + 1)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        return self.application(environ, start_response)


def read_at_most(stream: IO[bytes], size: int) -> bytes:
    """Up to ``size`` bytes of ``stream``, fewer if it ends first."""
    chunks: list[bytes] = []
    remaining = size
    while remaining > 0:
        chunk = stream.read(min(remaining, READ_BYTES))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)
