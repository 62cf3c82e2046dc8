"""Closing a connection after its last answer without losing that answer.

The service answers some bodies without reading them (413 over the limit, 503
``server_busy``). Closing a socket with unread bytes makes the kernel send a reset,
and a peer still sending - nginx forwarding the body from its buffer - meets the
reset and loses the answer it had not read yet (nginx answers 502). So the
connection is half-closed after the answer, and what the peer still sends is read
and dropped until it closes, before the socket is closed (RFC 9112 9.6). gunicorn's
own graceful close drops only 64 KiB.

The linger is short: a proxy on the same host or network sends any body its own
limit admits in a fraction of it, while a client that sends its whole body before
reading (most HTTP/1.1 clients) gets the reset once it is over and reads the answer
then - within a second, not after its whole upload. Reads are large so that a thread
waiting for the GIL between them, beside threads parsing large bodies, does not slow
the drain.
"""

from __future__ import annotations

import socket
import time

DRAIN_BYTES = 64 * 1024 * 1024  # dropped at most, then the socket is closed anyway
DRAIN_SECONDS = 0.5  # a slow or large sender holds the thread no longer
READ_BYTES = 1024 * 1024


def close_lingering(sock: socket.socket) -> None:
    """Half-close ``sock``, drop what the peer still sends, then close it."""
    try:
        sock.shutdown(socket.SHUT_WR)
        sock.setblocking(True)
        deadline = time.monotonic() + DRAIN_SECONDS
        drained = 0
        while drained < DRAIN_BYTES:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            sock.settimeout(remaining)
            # Not recv_into a buffer made here: zeroing 1 MiB for every closed
            # connection cost 450 us where the peer had nothing left (recv: 11 us).
            received = len(sock.recv(READ_BYTES))
            if not received:  # the peer closed: nothing unread is left
                break
            drained += received
    except OSError:  # a reset or the deadline (socket.timeout)
        pass
    finally:
        sock.close()
