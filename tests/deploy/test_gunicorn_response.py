"""The worker's response sends its head and its one body chunk in one send
(powercontext/gunicorn_response.py), and keeps gunicorn's framing otherwise.

gunicorn's own ``Response`` runs against a socket that records each ``sendall``:
what a client receives is the concatenation, and the calls say how many sends it
took. The worker serving real requests with it is tests/deploy/test_gunicorn_worker.py.
"""

from __future__ import annotations

import tempfile
from typing import Any

import pytest
from gunicorn.config import Config
from gunicorn.http import wsgi

from powercontext.gunicorn_response import OneSendResponse


class RecordingSocket:
    def __init__(self) -> None:
        self.sends: list[bytes] = []

    def sendall(self, data: bytes) -> None:
        self.sends.append(bytes(data))

    def sendfile(self, file: Any, offset: int = 0, count: int | None = None) -> int:
        file.seek(offset)
        data = file.read(count)
        self.sends.append(data)
        return len(data)

    @property
    def received(self) -> bytes:
        return b"".join(self.sends)


class Request:
    """What gunicorn's ``Response`` reads of the request."""

    def __init__(self, method: str = "GET") -> None:
        self.method = method
        self.version = (1, 1)
        self.path = "/"

    def should_close(self) -> bool:
        return False


def respond(
    response_class: type, status: str, headers: list, chunks: list[bytes], **req: Any
) -> RecordingSocket:
    sock = RecordingSocket()
    response = response_class(Request(**req), sock, Config())
    response.start_response(status, headers)
    for chunk in chunks:
        response.write(chunk)
    response.close()
    return sock


def without_date(data: bytes) -> bytes:
    return b"\r\n".join(
        line for line in data.split(b"\r\n") if not line.startswith(b"Date: ")
    )


LENGTH = [("Content-Type", "application/json"), ("Content-Length", "11")]


def test_a_response_of_known_length_leaves_in_one_send() -> None:
    sock = respond(OneSendResponse, "200 OK", LENGTH, [b'{"ok": true'[:11]])

    assert len(sock.sends) == 1
    assert sock.sends[0].startswith(b"HTTP/1.1 200 OK\r\n")
    assert sock.sends[0].endswith(b"\r\n\r\n" + b'{"ok": true'[:11])


@pytest.mark.parametrize(
    ("status", "headers", "chunks", "method"),
    [
        ("200 OK", LENGTH, [b'{"ok": true'[:11]], "GET"),
        ("200 OK", [("Content-Type", "text/plain")], [b"one", b"two", b""], "GET"),
        ("200 OK", LENGTH, [b'{"ok": true'[:11]], "HEAD"),
        ("204 No Content", [], [], "DELETE"),
        ("200 OK", [("Content-Length", "0")], [], "GET"),
    ],
    ids=["known length", "chunked", "HEAD", "204", "empty body"],
)
def test_the_client_receives_what_gunicorns_response_sends(
    status: str, headers: list, chunks: list[bytes], method: str
) -> None:
    ours = respond(OneSendResponse, status, headers, chunks, method=method)
    gunicorns = respond(wsgi.Response, status, headers, chunks, method=method)

    assert without_date(ours.received) == without_date(gunicorns.received)
    assert len(ours.sends) <= len(gunicorns.sends)


def test_a_chunked_body_still_ends_with_the_last_chunk() -> None:
    sock = respond(OneSendResponse, "200 OK", [], [b"one", b"two"])

    assert sock.received.endswith(b"3\r\none\r\n3\r\ntwo\r\n0\r\n\r\n")


def test_a_file_sent_with_sendfile_follows_its_head() -> None:
    with tempfile.TemporaryFile() as file:
        file.write(b"static bytes")
        file.seek(0)
        sock = RecordingSocket()
        response = OneSendResponse(Request(), sock, Config())
        response.start_response("200 OK", [("Content-Length", "12")])
        sent = response.sendfile(wsgi.FileWrapper(file))
        response.close()

    assert sent is True
    assert sock.sends[0].startswith(b"HTTP/1.1 200 OK\r\n")
    assert sock.sends[0].endswith(b"\r\n\r\n")
    assert sock.received.endswith(b"\r\n\r\nstatic bytes")


def test_a_head_made_but_never_sent_is_not_taken_for_one_on_the_wire() -> None:
    # The worker answers 500 for an error before anything was sent; gthread would
    # only close the connection once a head is out.
    sock = RecordingSocket()
    response = OneSendResponse(Request(), sock, Config())
    response.start_response("200 OK", LENGTH)
    with pytest.raises(TypeError):
        response.write("not bytes")  # type: ignore[arg-type]

    assert response.headers_sent
    assert response.head is not None
    assert sock.sends == []


def test_the_recording_socket_sees_gunicorns_separate_sends() -> None:
    # The comparison above means something: gunicorn's own response takes two
    # sends for the same answer.
    sock = respond(wsgi.Response, "200 OK", LENGTH, [b'{"ok": true'[:11]])

    assert len(sock.sends) == 2
