"""Faults for the consistency campaign: a TCP fault proxy and the nemesis.

``FaultProxy`` sits on loopback between the service and PostgreSQL (the service's
``DATABASE_URL`` names the proxy's port). One thread runs it with ``select``, so a
reset is a real RST (``SO_LINGER`` 0, then ``close``) sent from the thread that
owns the sockets. It can:

- **stall**: stop forwarding in both directions for a while, then deliver what
  was held (a network that pauses: queries wait, nothing is lost);
- **drop**: stop forwarding, then reset every connection that was open during
  the outage (a partition that ends with the connections torn down: what was held
  is lost, in either direction);
- **reset**: reset every open connection at once.

``Nemesis`` injects one fault after another, round robin, at random intervals,
and logs each one in the history as a ``nemesis`` event.
"""

from __future__ import annotations

import contextlib
import random
import select
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.consistency.workload import Recorder


class FaultProxy:
    """A TCP proxy from ``127.0.0.1:port`` (0: any free port) to ``upstream``."""

    def __init__(self, upstream_port: int, port: int = 0) -> None:
        self.upstream_port = upstream_port
        self._listener = socket.create_server(("127.0.0.1", port))
        self.port = int(self._listener.getsockname()[1])
        self._peers: dict[socket.socket, socket.socket] = {}
        self._flowing = threading.Event()
        self._flowing.set()
        self._reset_requested = threading.Event()
        self._reset_done = threading.Event()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="fault-proxy")
        self.connections = 0

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._closed.set()
        self._thread.join(timeout=10)
        self._listener.close()

    # --- faults --------------------------------------------------------------------

    def stall(self, seconds: float) -> None:
        self._flowing.clear()
        time.sleep(seconds)
        self._flowing.set()

    def drop(self, seconds: float) -> None:
        self._flowing.clear()
        time.sleep(seconds)
        self.reset()
        self._flowing.set()

    def reset(self) -> None:
        self._reset_done.clear()
        self._reset_requested.set()
        self._reset_done.wait(timeout=10)

    # --- the loop --------------------------------------------------------------------

    def _loop(self) -> None:
        while not self._closed.is_set():
            if self._reset_requested.is_set():
                self._reset_all()
                self._reset_requested.clear()
                self._reset_done.set()
            readers = [self._listener]
            if self._flowing.is_set():
                readers += list(self._peers)
            ready, _, _ = select.select(readers, [], [], 0.05)
            for sock in ready:
                if sock is self._listener:
                    self._accept()
                elif sock in self._peers:
                    self._forward(sock)
        self._reset_all()

    def _accept(self) -> None:
        client, _ = self._listener.accept()
        try:
            upstream = socket.create_connection(
                ("127.0.0.1", self.upstream_port), timeout=5
            )
        except OSError:
            _reset(client)
            return
        for sock in (client, upstream):
            sock.settimeout(10)
        self._peers[client], self._peers[upstream] = upstream, client
        self.connections += 1

    def _forward(self, sock: socket.socket) -> None:
        peer = self._peers[sock]
        try:
            data = sock.recv(65536)
            if data:
                peer.sendall(data)
                return
        except OSError:
            pass
        self._forget(sock, peer)
        for end in (sock, peer):
            with contextlib.suppress(OSError):
                end.close()

    def _forget(self, sock: socket.socket, peer: socket.socket) -> None:
        self._peers.pop(sock, None)
        self._peers.pop(peer, None)

    def _reset_all(self) -> None:
        for sock in list(self._peers):
            _reset(sock)
        self._peers.clear()


def _reset(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()


@dataclass
class Nemesis:
    """Injects ``faults`` (name -> action) round robin every ``interval`` seconds
    (a random value in the range) until stopped; counts what it did."""

    recorder: Recorder
    faults: dict[str, Callable[[], Any]]
    interval: tuple[float, float] = (8.0, 16.0)
    seed: int = 0
    injected: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="nemesis")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=180)

    @property
    def total(self) -> int:
        return sum(self.injected.values())

    def _run(self) -> None:
        rng = random.Random(self.seed)
        names = list(self.faults)
        for turn in range(10**9):
            if self._stop.wait(rng.uniform(*self.interval)):
                return
            name = names[turn % len(names)]
            self.recorder.fault(name, "start")
            try:
                self.faults[name]()
            except (Exception, pytest.fail.Exception) as error:
                self.failures.append(f"{name}: {error!r}")
                self.recorder.fault(name, f"failed: {error!r}")
                continue
            self.recorder.fault(name, "end")
            self.injected[name] = self.injected.get(name, 0) + 1
