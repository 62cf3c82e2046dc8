"""An answer to a body left unread (powercontext/api/wsgi_input.py): it goes out
with its length before the drain, which reads the rest once the answer closes.
A server like granian ends an answer of unknown length only when it is closed,
so a client that waits for the answer before sending its body would otherwise
wait for the drain, and the drain for it."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from powercontext.api.wsgi_input import RequestBodies

REFUSAL = b'{"error": {"code": "request_too_large"}}'


class Refusal:
    """Django's answer without reading the body: an iterable with close()."""

    closed = False

    def __iter__(self) -> Iterator[bytes]:
        return iter([REFUSAL])

    def close(self) -> None:
        self.closed = True


def refusing(status: str, headers: list[tuple[str, str]]) -> Callable[..., Any]:
    def application(
        environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        start_response(status, headers)
        return Refusal()

    return application


def call(application: Callable[..., Any], body: bytes, declared: int) -> tuple:
    started: list[tuple[str, list[tuple[str, str]]]] = []
    stream = io.BytesIO(body)
    environ = {
        "REQUEST_METHOD": "POST",
        "CONTENT_LENGTH": str(declared),
        "wsgi.input": stream,
        "wsgi.input_terminated": True,
    }
    response = RequestBodies(application)(
        environ,
        lambda status, headers, exc_info=None: started.append((status, headers)),
    )
    return started, response, stream


def test_an_answer_to_an_unread_body_has_its_length_and_the_rest_is_drained() -> None:
    application = refusing(
        "413 Content Too Large", [("Content-Type", "application/json")]
    )

    started, response, stream = call(application, b"x" * 1000, 1000)
    sent = b"".join(response)
    drained_before_close = stream.tell()
    response.close()  # type: ignore[attr-defined]

    assert started == [
        (
            "413 Content Too Large",
            [
                ("Content-Type", "application/json"),
                ("Content-Length", str(len(REFUSAL))),
            ],
        )
    ]
    assert sent == REFUSAL
    assert (drained_before_close, stream.tell()) == (0, 1000)


def test_an_answer_with_a_length_is_passed_on_as_it_is() -> None:
    headers = [("Content-Length", str(len(REFUSAL)))]

    started, response, _ = call(refusing("413 Content Too Large", headers), b"", 10)

    assert started == [("413 Content Too Large", headers)]
    assert b"".join(response) == REFUSAL


def test_a_body_read_whole_leaves_the_answer_as_it_is() -> None:
    def reading(
        environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        environ["wsgi.input"].read()
        start_response("201 Created", [])
        return [b"{}"]

    started, response, _ = call(reading, b"{}", 2)

    assert started == [("201 Created", [])]
    assert response == [b"{}"]
