"""The gunicorn worker: gthread's HTTP handling, without its event loop hand-offs
(gthread's loop thread hands each readable connection to a pool thread and gets it
back through a pipe: two thread crossings per request; decision 0027).

Here the threads share one epoll set: an idle thread waits on it, and the thread
that sees a connection readable serves it, then re-arms it (``EPOLLONESHOT``: one
readiness goes to one thread). The listening sockets are in the same set, so only
an idle thread accepts and a burst of connects spreads over the workers (decision
0026). The main thread keeps the worker alive for the arbiter, closes kept-alive
connections past their timeout and runs the graceful stop. Parsing, the WSGI call
and error handling are gthread's own (``ThreadWorker.handle`` and
``handle_request`` of the pinned release); tests/deploy/test_gunicorn_worker.py.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import socket
import threading
import time
from typing import Any

from gunicorn.workers import base
from gunicorn.workers.gthread import (
    _DEFER,
    STOP_KEEPALIVE_LINGER,
    TConn,
    ThreadWorker,
)

from powercontext.gunicorn_linger import close_lingering

ARM = select.EPOLLIN | select.EPOLLONESHOT
PEEK = socket.MSG_PEEK | socket.MSG_DONTWAIT
POLL_SECONDS = 1.0  # an idle thread looks at self.alive at least this often


class SharedPollThreadWorker(ThreadWorker):
    """Threads that each poll, accept and serve; see the module docstring."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Connections waiting for their next request, by descriptor, armed in the
        # epoll set (gthread's handle_request counts its ``keepalived_conns``).
        self.parked: dict[int, TConn] = {}
        self.keepalived_conns = self.parked
        self.lock = threading.Lock()
        self.in_flight = 0  # connections a thread is serving
        self.listeners: dict[int, socket.socket] = {}
        self.accepting = False
        self.stopped = False  # the threads leave their loop
        self.epoll: Any = None
        self.serving_threads: list[threading.Thread] = []

    def init_process(self) -> None:
        self.epoll = select.epoll()
        # Not ThreadWorker.init_process: no pool, selector or method queue.
        base.Worker.init_process(self)

    def handle_exit(self, sig: Any, frame: Any) -> None:
        # No lock here (it could interrupt its holder); gunicorn's wake-up pipe
        self.alive = False  # wakes the main thread

    def handle_quit(self, sig: Any, frame: Any) -> None:
        base.Worker.handle_quit(self, sig, frame)

    # --- the main thread ---------------------------------------------------------

    def run(self) -> None:
        for listener in self.sockets:
            listener.setblocking(False)
            self.listeners[listener.fileno()] = listener
        self.set_accepting(True)
        for n in range(self.cfg.threads):
            thread = threading.Thread(
                target=self.serve_forever, name=f"serve-{n}", daemon=True
            )
            thread.start()
            self.serving_threads.append(thread)

        while self.alive:
            self.notify()
            if not self.is_parent_alive():
                self.alive = False
                break
            if not all(thread.is_alive() for thread in self.serving_threads):
                # Only an escaped BaseException ends one: replace, not serve less.
                self.log.error("A serving thread ended; restarting the worker")
                self.alive = False
                break
            self.set_accepting(None)
            self.close_expired()
            self.wait_for_signal(POLL_SECONDS)
        self.stop_gracefully()

    def wait_for_signal(self, seconds: float) -> None:
        """Sleep up to ``seconds``, less if a signal comes (gunicorn's wake-up pipe)."""
        try:
            ready, _, _ = select.select([self.PIPE[0]], [], [], seconds)
        except InterruptedError:
            return
        if ready:
            with contextlib.suppress(OSError):
                while os.read(self.PIPE[0], 4096):
                    pass

    def stop_gracefully(self) -> None:
        """Serve what is in flight; close kept-alive connections after a linger."""
        self.set_accepting(False)
        linger = time.monotonic() + STOP_KEEPALIVE_LINGER
        with self.lock:
            for conn in self.parked.values():
                conn.timeout = min(conn.timeout, linger)
        deadline = time.monotonic() + self.cfg.graceful_timeout
        while time.monotonic() < deadline:
            self.notify()
            self.close_expired()
            with self.lock:
                if not self.parked and not self.in_flight:
                    break
            time.sleep(0.05)
        self.stopped = True
        for thread in self.serving_threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self.close_expired(everything=True)
        self.epoll.close()
        for listener in self.sockets:
            listener.close()

    def set_accepting(self, enabled: bool | None) -> None:
        """Poll the listening sockets or not; ``None``: while below the
        ``worker_connections`` cap (decided under the lock, with the count)."""
        with self.lock:
            if enabled is None:
                enabled = self.nr_conns < self.worker_connections
            if enabled == self.accepting or (enabled and not self.alive):
                return
            for fd in self.listeners:
                if enabled:
                    self.epoll.register(fd, select.EPOLLIN)
                else:
                    self.epoll.unregister(fd)
            self.accepting = enabled

    def close_expired(self, everything: bool = False) -> None:
        now = time.monotonic()
        with self.lock:
            expired = [
                fd
                for fd, conn in self.parked.items()
                if everything or conn.timeout <= now
            ]
            conns = [self.parked.pop(fd) for fd in expired]
            self.nr_conns -= len(conns)
        for conn in conns:
            self.forget(conn)
            conn.close()

    # --- the serving threads -----------------------------------------------------

    def serve_forever(self) -> None:
        while not self.stopped:
            try:
                events = self.epoll.poll(POLL_SECONDS, 1)
            except InterruptedError:
                continue
            except (OSError, ValueError):  # the set was closed: stopping
                return
            for fd, _mask in events:
                listener = self.listeners.get(fd)
                # A thread outlives any one connection's failure (decision 0027).
                try:
                    if listener is not None:
                        self.accept_and_serve(listener)
                    else:
                        self.serve_parked(fd)
                except BaseException:  # SystemExit from an application included
                    self.log.exception("Error serving a connection")

    def accept_and_serve(self, listener: socket.socket) -> None:
        try:
            client, address = listener.accept()
        except OSError as e:  # another thread or worker took it
            if e.errno in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                return
            raise
        with self.lock:
            self.nr_conns += 1
            self.in_flight += 1
        conn = None
        try:
            self.set_accepting(None)  # off at the cap
            conn = TConn(self.cfg, client, address, listener.getsockname())
            client.setblocking(True)
            # In the set from the start, disarmed: parking only re-arms it.
            self.epoll.register(client.fileno(), select.EPOLLONESHOT)
            self.serve(conn)
        except BaseException:
            if conn is None:
                with self.lock:
                    self.nr_conns -= 1
                client.close()
            else:
                self.close(conn)
            raise
        finally:
            with self.lock:
                self.in_flight -= 1

    def serve_parked(self, fd: int) -> None:
        with self.lock:
            conn = self.parked.pop(fd, None)
            if conn is None:  # closed as expired after the event was delivered
                return
            self.in_flight += 1
        try:
            if self.readable(conn):
                conn.data_ready = True
                self.serve(conn)
            else:  # a stale event: the descriptor is another connection's now
                self.park(conn, refresh=False)
        except BaseException:
            self.close(conn)
            raise
        finally:
            with self.lock:
                self.in_flight -= 1

    @staticmethod
    def readable(conn: TConn) -> bool:
        """A request's bytes (or the peer's close) are waiting on the socket."""
        try:  # the plain socket's recv: for TLS, whether bytes arrived at all
            socket.socket.recv(conn.sock, 1, PEEK)
        except BlockingIOError:
            return False
        except OSError:
            pass  # handle() meets the error and closes the connection
        return True

    def serve(self, conn: TConn) -> None:
        """Serve requests on ``conn`` while they are already here, then park it."""
        while True:
            result = self.handle(conn)
            if result is _DEFER:  # a new connection sent nothing in time
                if self.alive:
                    self.park(conn)
                else:
                    self.close(conn)
                return
            if not result:
                self.close(conn, graceful=True)
                return
            if not self.next_request_here(conn):
                self.park(conn)
                return

    def next_request_here(self, conn: TConn) -> bool:
        """Serve ``conn``'s next request at once: read ahead by a body drain, or on
        the socket while another thread is idle for the others (decision 0030)."""
        if conn.parser.unreader.buf.getvalue():
            return True
        # A snapshot, as stale under the lock as without it once read.
        return self.in_flight < self.cfg.threads and self.readable(conn)

    def park(self, conn: TConn, refresh: bool = True) -> None:
        if refresh:
            conn.set_timeout()
            if not self.alive:
                conn.timeout = min(
                    conn.timeout, time.monotonic() + STOP_KEEPALIVE_LINGER
                )
        fd = conn.sock.fileno()
        with self.lock:
            # In the table and armed together: an event for it finds it there.
            self.parked[fd] = conn
            try:
                self.epoll.modify(fd, ARM)
            except BaseException:
                del self.parked[fd]
                raise

    def close(self, conn: TConn, graceful: bool = False) -> None:
        """Close a connection this thread holds (nobody else can reach it)."""
        with self.lock:
            self.nr_conns -= 1
        self.forget(conn)
        with contextlib.suppress(OSError):
            if graceful:  # no reset before the peer has read the answer
                close_lingering(conn.sock)
            else:
                conn.close()

    def forget(self, conn: TConn) -> None:
        # A socket that handle() closed already left the set with its descriptor.
        with contextlib.suppress(OSError, ValueError):
            self.epoll.unregister(conn.sock.fileno())
