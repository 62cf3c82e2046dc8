"""A response's head and body in one send, for the gunicorn worker.

gunicorn writes a response's head with one ``sendall`` and each body chunk with
another. Over loopback or a LAN each send is a segment of its own and wakes the
reader again: the service's answers are one chunk each (their length is known,
``api.middleware``), so here the head waits for that chunk and both go in one
send. A body that is framed in chunks, sent with ``sendfile`` or absent still
gets the head first, on its own, as gunicorn does it.

``handle_request`` is gthread's ``ThreadWorker.handle_request`` of the pinned
release (gunicorn 27.0.1) with this response class. One thing differs: an error
after the head was made but before it was sent (a body chunk that is not bytes)
is answered with gunicorn's 500, where gthread would close a connection on which
a head had already gone out.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import Any

from gunicorn import util
from gunicorn.http import wsgi


class _HeldHead:
    """Stands in for the socket while gunicorn writes the head, and keeps it."""

    def __init__(self) -> None:
        self.data = b""

    def sendall(self, data: bytes) -> None:
        self.data += data


class OneSendResponse(wsgi.Response):
    """gunicorn's response, holding its head back for the first body chunk."""

    sock: Any  # the client socket (gunicorn's attribute)
    head: bytes | None = None

    def send_headers(self) -> None:
        if self.headers_sent:
            return
        sock, held = self.sock, _HeldHead()
        self.sock = held
        try:
            super().send_headers()  # gunicorn's own head, written to ``held``
        finally:
            self.sock = sock
        self.head = held.data

    def send_head(self) -> None:
        """Send the head now if it is still held."""
        if self.head is not None:
            head, self.head = self.head, None
            self.sock.sendall(head)

    def _emit_body(self, data: bytes) -> None:
        if self.head is not None and not self.chunked:
            head, self.head = self.head, None
            self.sock.sendall(head + data)
            return
        self.send_head()
        super()._emit_body(data)

    def sendfile(self, respiter: Any) -> bool:
        self.send_headers()
        self.send_head()
        return bool(super().sendfile(respiter))

    def close(self) -> None:
        self.send_headers()
        self.send_head()
        super().close()


def handle_request(worker: Any, req: Any, conn: Any) -> bool:
    """gthread's ``handle_request`` (see the module docstring), as a worker method."""
    environ: dict = {}
    resp = None
    try:
        worker.cfg.pre_request(worker, req)
        request_start = datetime.now(UTC)
        resp, environ = wsgi.create(
            req,
            conn.sock,
            conn.client,
            conn.server,
            worker.cfg,
            response_class=OneSendResponse,
        )
        environ["wsgi.multithread"] = True
        worker.nr += 1
        if worker.nr >= worker.max_requests:
            if worker.alive:
                worker.log.info("Autorestarting worker after current request.")
                worker.alive = False
            resp.force_close()

        if (
            not worker.alive
            or not worker.cfg.keepalive
            or len(worker.keepalived_conns) >= worker.max_keepalived
        ):
            resp.force_close()

        respiter = worker.wsgi(environ, resp.start_response)
        try:
            if isinstance(respiter, environ["wsgi.file_wrapper"]):
                resp.write_file(respiter)
            else:
                for item in respiter:
                    resp.write(item)

            resp.close()
        finally:
            request_time = datetime.now(UTC) - request_start
            worker.log.access(resp, req, environ, request_time)
            if hasattr(respiter, "close"):
                respiter.close()

        if resp.should_close():
            worker.log.debug("Closing connection.")
            return False
    except OSError:
        # pass to next try-except level
        util.reraise(*sys.exc_info())
    except (Exception, SystemExit):
        if resp and resp.headers_sent and resp.head is None:
            # Timeout abort is SystemExit. If we already started the
            # response, writing a 500 on the same socket corrupts it.
            # (A head still held was never sent: the 500 goes out instead.)
            worker.log.exception("Error handling request")
            util.close_graceful(conn.sock)
            raise StopIteration() from None
        raise
    finally:
        try:
            worker.cfg.post_request(worker, req, environ, resp)
        except Exception:
            worker.log.exception("Exception in post_request hook")

    return True
