"""The WSGI layer around Django: a chunked request body gets a length, and a body
answered unread is drained.

A body sent with ``Transfer-Encoding: chunked`` reaches the application without a
``Content-Length``; the server marks such an input ``wsgi.input_terminated``
(a WSGI extension granian, gunicorn and others set: reading to the end is safe). Django
reads no more than ``CONTENT_LENGTH`` bytes of a request, so without one the body
would silently read as empty.

Here, before Django sees the request, such a body is read up to the body limit
plus one byte and handed on as an ordinary body of known length: what the
request's own ``Content-Length`` would have said. The limit itself is enforced
once, by ``BodySizeLimitMiddleware``, which answers 413 for a length over it -
an oversized chunked upload is never read whole. Only PEP 3333's environ is used.

A body the application answered without reading (a 413, or a refusal before the
body mattered) is read and discarded after the answer, when the server closes the
response, up to ``DRAIN_LIMIT_BYTES``: a client or proxy still sending it would
otherwise meet a connection reset and lose the answer (RFC 9112 9.6; nginx turns
that into a 502). Beyond that limit the connection is closed unread. Such an answer
is sent with its length (it is read whole first, up to ``ANSWER_BUFFER_BYTES``):
granian ends a response of unknown length only once the response is closed, so a
client that waits for the answer before it sends the body (``Expect``-less, as
``http.client`` may) would wait for the drain, and the drain for it.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

from django.conf import settings

WSGIApplication = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
READ_BYTES = 64 * 1024
BODYLESS_METHODS = ("GET", "HEAD")
DRAIN_LIMIT_BYTES = 64 * 1024 * 1024
# An answer to a body left unread is a refusal (an error envelope): small.
ANSWER_BUFFER_BYTES = 1024 * 1024
# Answers that carry no body, and so no Content-Length (RFC 9110 8.6).
BODYLESS_STATUSES = ("204", "304")


class RequestBodies:
    """A WSGI application that gives ``application`` chunked bodies with a length,
    and drains after the answer what it left unread of a body."""

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
            environ_input = environ["wsgi.input"]
            body = read_at_most(environ_input, limit + 1)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
            if len(body) > limit:
                # Refused as too large: the rest is drained after the answer.
                held = HeldStart(start_response)
                response = self.application(environ, held)
                return answer_then_drain(
                    held, response, environ_input, DRAIN_LIMIT_BYTES
                )
            return self.application(environ, start_response)
        length = content_length(environ)
        if not length:
            return self.application(environ, start_response)
        counted = CountingInput(environ["wsgi.input"])
        environ["wsgi.input"] = counted
        held = HeldStart(start_response)
        response = self.application(environ, held)
        unread = length - counted.consumed
        if unread <= 0:
            if held.sent_write is None:
                held.send()
            return response
        return answer_then_drain(
            held, response, counted, min(unread, DRAIN_LIMIT_BYTES)
        )


def content_length(environ: dict[str, Any]) -> int:
    """The request's declared body length; 0 when absent or not a number."""
    try:
        return max(0, int(environ.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0


class CountingInput:
    """``wsgi.input`` that counts the bytes the application read from it."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.consumed = 0

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        self.consumed += len(data)
        return data

    def readline(self, size: int = -1) -> bytes:
        data = self.stream.readline(size)
        self.consumed += len(data)
        return data

    def readlines(self, hint: int = -1) -> list[bytes]:
        lines = self.stream.readlines(hint)
        self.consumed += sum(map(len, lines))
        return lines

    def __iter__(self) -> Iterator[bytes]:
        for line in self.stream:
            self.consumed += len(line)
            yield line


class HeldStart:
    """``start_response`` held back until the layer knows the answer's headers:
    ``send`` passes them on as given. The application's ``write`` (PEP 3333's
    legacy callable) sends them first."""

    def __init__(self, start_response: Callable[..., Any]) -> None:
        self.start_response = start_response
        self.status = ""
        self.headers: list[tuple[str, str]] = []
        self.exc_info: Any = None
        self.sent_write: Callable[[bytes], Any] | None = None

    def __call__(
        self, status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Callable[[bytes], Any]:
        self.status, self.headers, self.exc_info = status, headers, exc_info
        return self.write

    def write(self, data: bytes) -> Any:
        if self.sent_write is None:
            self.sent_write = self.send()
        return self.sent_write(data)

    def send(self, extra: list[tuple[str, str]] | None = None) -> Any:
        return self.start_response(
            self.status, [*self.headers, *(extra or [])], self.exc_info
        )


def answer_then_drain(
    held: HeldStart, response: Iterable[bytes], stream: Any, limit: int
) -> DrainAfterAnswer:
    """``response`` with its length when it has none and is small, then drained."""
    if held.sent_write is not None:  # the application wrote its headers already
        return DrainAfterAnswer(response, response, stream, limit)
    if held.status[:3] in BODYLESS_STATUSES or any(
        name.lower() == "content-length" for name, _ in held.headers
    ):
        held.send()
        return DrainAfterAnswer(response, response, stream, limit)
    chunks: list[bytes] = []
    rest = iter(response)
    size = 0
    for chunk in rest:
        chunks.append(chunk)
        size += len(chunk)
        if size > ANSWER_BUFFER_BYTES:
            held.send()
            return DrainAfterAnswer(
                itertools.chain(chunks, rest), response, stream, limit
            )
    held.send([("Content-Length", str(size))])
    return DrainAfterAnswer(chunks, response, stream, limit)


class DrainAfterAnswer:
    """A response (``body``, then ``response`` closed) that, once sent and
    closed, reads up to ``limit`` bytes of the request body the application left
    unread, and discards them."""

    def __init__(
        self, body: Iterable[bytes], response: Iterable[bytes], stream: Any, limit: int
    ) -> None:
        self.body = body
        self.response = response
        self.stream = stream
        self.limit = limit

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.body)

    def close(self) -> None:
        try:
            close = getattr(self.response, "close", None)
            if close is not None:
                close()
        finally:
            discard(self.stream, self.limit)


def discard(stream: Any, size: int) -> None:
    """Read and drop up to ``size`` bytes of ``stream``; a failing read ends it
    (the client went away: nothing is left to protect)."""
    remaining = size
    try:
        while remaining > 0:
            chunk = stream.read(min(remaining, READ_BYTES))
            if not chunk:
                return
            remaining -= len(chunk)
    except OSError:
        return


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
