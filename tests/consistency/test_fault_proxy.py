"""The fault proxy does what the campaign counts on: it forwards, a stall holds
bytes and then delivers them, a reset is an RST, a drop loses what it held."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from tests.consistency.faults import FaultProxy


@pytest.fixture
def proxy() -> Iterator[FaultProxy]:
    """A proxy in front of an echo server on loopback."""
    upstream = socket.create_server(("127.0.0.1", 0))

    def echo() -> None:
        while True:
            try:
                conn, _ = upstream.accept()
            except OSError:
                return
            threading.Thread(target=_echo, args=(conn,), daemon=True).start()

    threading.Thread(target=echo, daemon=True).start()
    proxy = FaultProxy(upstream.getsockname()[1])
    proxy.start()
    yield proxy
    proxy.close()
    upstream.close()


def _echo(conn: socket.socket) -> None:
    with conn, contextlib.suppress(OSError):  # the proxy resets it
        while data := conn.recv(4096):
            conn.sendall(data)


@pytest.fixture
def client(proxy: FaultProxy) -> Iterator[socket.socket]:
    """A connection through the proxy that has echoed once."""
    with socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as client:
        client.sendall(b"hello")
        assert client.recv(5) == b"hello"
        yield client


def test_a_stall_holds_bytes_and_then_delivers_them(
    proxy: FaultProxy, client: socket.socket
) -> None:
    stall = threading.Thread(target=proxy.stall, args=(1.5,))
    stall.start()
    time.sleep(0.2)
    sent = time.monotonic()
    client.sendall(b"later")

    assert client.recv(5) == b"later"
    assert time.monotonic() - sent > 1.0
    stall.join()


def test_a_reset_is_an_rst(proxy: FaultProxy, client: socket.socket) -> None:

    proxy.reset()

    with pytest.raises(ConnectionResetError):
        client.recv(1)


def test_a_drop_loses_what_it_held_and_resets(
    proxy: FaultProxy, client: socket.socket
) -> None:
    drop = threading.Thread(target=proxy.drop, args=(1.0,))
    drop.start()
    time.sleep(0.2)
    client.sendall(b"lost")
    drop.join()

    with pytest.raises(ConnectionResetError):
        client.recv(4)
