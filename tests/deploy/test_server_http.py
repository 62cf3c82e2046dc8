"""The server as the launcher configures it (``powercontext.serve``: granian's
WSGI interface) keeps HTTP/1.1's promises.

A kept-alive connection is served again and again and closed once idle past the
keep-alive timeout; pipelined requests are all answered; more connections than
threads are all served; a worker past ``POWERCONTEXT_WORKER_MAX_RSS`` is replaced
with nothing refused; on ``SIGTERM`` a request in flight is finished and the
workers exit; a body answered unread (413) is drained so that its sender reads the
answer. These held for the custom worker this service shipped before decision
0035 and for gunicorn's gthread after it, and must hold for whatever server
replaces them.
"""

from __future__ import annotations

import contextlib
import ctypes
import http.client
import os
import signal
import socket
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.deploy.test_launcher import LAUNCHER, Server, service_env, serving, start
from tests.robustness.processes import free_port, wait_until

__all__ = ["start"]  # the fixture, used by name below

LIVE = b"GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


class _Stream:
    """One connection's buffered reader, shared by the responses read from it."""

    def __init__(self, client: socket.socket) -> None:
        self.reader = client.makefile("rb")

    def makefile(self, mode: str) -> _Stream:
        return self

    def __getattr__(self, name: str) -> Any:
        return getattr(self.reader, name)

    def close(self) -> None:  # a response is done; the connection is not
        pass


def read_responses(
    client: socket.socket, count: int, *, methods: Sequence[str] = ()
) -> list[tuple[int, dict, bytes]]:
    """The next ``count`` responses on ``client``: status, headers, body. ``methods``
    names the requests' methods where one was a HEAD, whose answer has no body."""
    stream = _Stream(client)
    responses = []
    for method in methods or ("GET",) * count:
        response = http.client.HTTPResponse(stream, method=method)  # type: ignore[arg-type]
        response.begin()
        headers = {k.lower(): v.lower() for k, v in response.getheaders()}
        responses.append((response.status, headers, response.read()))
    return responses


def serving_port(start: Callable[..., Server], tmp_path: Path, **extra: str) -> int:
    port = free_port()
    serving(start, tmp_path, port, workers=2, **extra)
    return port


def test_a_kept_alive_connection_is_served_again_and_again(
    start: Callable[..., Server], tmp_path: Path
) -> None:
    port = serving_port(start, tmp_path)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        for _ in range(50):
            client.sendall(LIVE)
            ((status, headers, _body),) = read_responses(client, 1)
            assert status == 200
            # HTTP/1.1 keeps the connection unless told otherwise; gunicorn also
            # said so in a header, granian does not.
            assert headers.get("connection") != "close"


def test_pipelined_requests_are_all_answered_in_order(
    start: Callable[..., Server], tmp_path: Path
) -> None:
    port = serving_port(start, tmp_path)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(
            LIVE + b"GET /health/nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + LIVE
        )
        statuses = [status for status, _, _ in read_responses(client, 3)]
    assert statuses == [200, 404, 200]


def test_an_answer_goes_out_with_its_length_not_in_chunks(
    start: Callable[..., Server], tmp_path: Path
) -> None:
    """Errors included; a HEAD says the GET's length and sends no body, so the
    next answer on the connection starts where it should."""
    port = serving_port(start, tmp_path)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(
            LIVE + b"GET /health/nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            b"HEAD /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + LIVE
        )
        answers = read_responses(client, 4, methods=("GET", "GET", "HEAD", "GET"))
    for status, headers, body in (answers[0], answers[1], answers[3]):
        assert "transfer-encoding" not in headers, (status, headers)
        assert body
        assert headers["content-length"] == str(len(body)), (status, headers)
    assert [status for status, _, _ in answers] == [200, 404, 200, 200]
    _, head_headers, head_body = answers[2]
    assert head_body == b""
    assert head_headers["content-length"] == answers[0][1]["content-length"]


def test_more_connections_than_threads_are_all_served(
    start: Callable[..., Server], tmp_path: Path
) -> None:
    """2 workers of 2 threads, 12 kept-alive connections taking turns: every
    request is answered (a connection waits for a thread, never for a timeout)."""
    port = serving_port(start, tmp_path)
    clients = [
        socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(12)
    ]
    try:
        for _ in range(5):
            for client in clients:
                client.sendall(LIVE)
            for client in clients:
                ((status, _headers, _body),) = read_responses(client, 1)
                assert status == 200
    finally:
        for client in clients:
            client.close()


def test_an_idle_kept_alive_connection_is_closed_after_the_timeout(
    start: Callable[..., Server], tmp_path: Path
) -> None:
    port = serving_port(start, tmp_path, POWERCONTEXT_KEEPALIVE="1")
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(LIVE)
        read_responses(client, 1)
        kept = time.monotonic()
        assert client.recv(1) == b""  # the server closed it
        idle = time.monotonic() - kept
    assert 0.9 <= idle <= 3.5, idle


def test_a_worker_past_its_memory_limit_is_replaced_and_nothing_is_refused(
    start: Callable[..., Server], tmp_path: Path
) -> None:
    """Every worker is over a 1 MiB limit at the first sample (30 s after the
    start): each is replaced in turn, a new one started before the old one stops,
    while requests keep coming."""
    port = free_port()
    server = serving(start, tmp_path, port, workers=2, POWERCONTEXT_WORKER_MAX_RSS="1")
    deadline = time.monotonic() + 75
    while server.output().count("Stopped old worker-") < 2:
        assert time.monotonic() < deadline, server.output()[-3000:]
        with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
            client.sendall(LIVE)
            ((status, _headers, _body),) = read_responses(client, 1)
            assert status == 200
        time.sleep(0.1)
    assert server.output().count("RSS over threshold, gracefully respawning") >= 2


def test_on_sigterm_a_request_in_flight_is_finished(
    start: Callable[..., Server], tmp_path: Path
) -> None:
    port = free_port()
    server = serving(start, tmp_path, port, workers=2)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(
            b"POST /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{"
        )
        time.sleep(0.5)  # a thread is reading the body
        os.kill(server.process.pid, signal.SIGTERM)
        time.sleep(0.5)
        client.sendall(b' "a": 1 }')
        ((status, _headers, _body),) = read_responses(client, 1)
        # /health/live answers GET only; what matters is that an answer came.
        assert status == 405
        # Then closed: the worker is stopping.
        answered = time.monotonic()
        assert client.recv(1) == b""
        assert time.monotonic() - answered < 4
    server.process.wait(timeout=40)
    assert server.output().count("Stopped worker-") == 2


def test_on_sigterm_while_the_workers_load_the_server_stops_at_once(
    start: Callable[..., Server], tmp_path: Path
) -> None:
    """A worker still loading the application stops too (it would otherwise serve
    on and be killed after the 30 s grace)."""
    server = start(LAUNCHER, service_env(tmp_path, free_port()))
    wait_until(
        lambda: server.output().count("Spawning worker-") == 2,
        timeout=30,
        what="the workers to be spawned",
    )
    os.kill(server.process.pid, signal.SIGTERM)

    server.process.wait(timeout=10)
    assert "Started worker-" not in server.output()


@pytest.mark.parametrize("workers_too", [False, True], ids=["main", "group"])
def test_sigterm_taken_by_another_thread_of_the_main_process_stops_the_server(
    start: Callable[..., Server], tmp_path: Path, workers_too: bool
) -> None:
    """The kernel gives a signal sent to a process to any of its threads. Taken by
    a thread other than the main one (sent here to one with ``tgkill``), SIGTERM
    still stops the server within seconds (powercontext/serve_signals.py).

    granian's own handler ran only once something woke the main thread: its
    memory sampling, 30 s later. And when the workers got SIGTERM too, as ``kill``
    of the process group or systemd's default for a unit sends it, a worker's exit
    woke it, it ran the pending handler holding the lock that handler takes, and
    it waited forever."""
    server = serving(start, tmp_path, free_port(), workers=2)
    main = server.process.pid
    workers = [
        int(pid)
        for pid in Path(f"/proc/{main}/task/{main}/children").read_text().split()
    ]
    others = sorted(int(task.name) for task in Path(f"/proc/{main}/task").iterdir())
    others.remove(main)
    assert len(workers) == 2
    assert others

    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.tgkill(main, others[-1], signal.SIGTERM) == 0
    if workers_too:
        for worker in workers:
            # The server may have stopped this worker already (its stop is fast):
            # a process group's kill would find it gone too.
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker, signal.SIGTERM)

    server.process.wait(timeout=10)
    assert "Shutting down granian" in server.output()


def test_a_body_answered_unread_is_drained_so_the_sender_sees_the_answer(
    start: Callable[..., Server], tmp_path: Path
) -> None:
    """A proxy still sending a body the service refused unread (413 here) must not
    meet a reset: it would lose the answer (nginx answers 502). The worker reads
    and discards what follows its answer before it closes (RFC 9112 9.6)."""
    port = serving_port(
        start,
        tmp_path,
        POWERCONTEXT_MAX_BODY_BYTES="1048576",
        DJANGO_SECURE_SSL_REDIRECT="false",
    )
    chunk, chunks = b"x" * 524_288, 16  # 8 MiB, sent over about 0.16 s
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(
            b"POST /v1/scopes HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % (len(chunk) * chunks)
        )
        for _ in range(chunks):
            client.sendall(chunk)  # a reset would raise here
            time.sleep(0.01)
        ((status, _headers, _body),) = read_responses(client, 1)
        assert status == 413
