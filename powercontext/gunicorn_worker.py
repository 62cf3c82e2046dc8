"""The gunicorn worker: gthread, with new connections spread over the workers.

All workers poll one listening socket, and whichever wakes first accepts. gthread
hands an accepted connection to its thread pool and goes straight back to
accepting, so a burst of connects - a client pool opening, a proxy's keep-alive
connections after a restart - lands mostly on one worker, and a kept-alive
connection stays with the worker that accepted it. Measured with 16 keep-alive
clients and 3 workers: 0/16/0 and 2/14/0 connections per worker, one worker's
GIL doing all the work at ~1 core while the machine had two (docs/performance.md).

This worker stops polling the listening socket while every one of its threads
has a request, and resumes as one finishes: a busy worker leaves new connections
to an idle one, and when every worker is busy they wait in the listen backlog, as
they would have waited in a busy worker's pool queue. Nothing else changes.
gunicorn is pinned (pyproject.toml): the hooks below are gthread's own methods of
that release, and tests/deploy/test_gunicorn_config.py checks the spread.
"""

from __future__ import annotations

from typing import Any

from gunicorn.workers.gthread import ThreadWorker


class BalancedThreadWorker(ThreadWorker):
    """gthread that accepts new connections only while it has an idle thread."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.requests_in_flight = 0  # only the worker's event loop touches it

    def has_idle_thread(self) -> bool:
        return self.requests_in_flight < self.cfg.threads

    def enqueue_req(self, conn: Any) -> None:
        self.requests_in_flight += 1
        super().enqueue_req(conn)

    def finish_request(self, conn: Any, fs: Any) -> None:
        self.requests_in_flight -= 1
        super().finish_request(conn, fs)

    def set_accept_enabled(self, enabled: bool) -> None:
        # The event loop asks again on every turn while the two disagree, so a
        # worker refused here starts accepting as soon as a thread is idle.
        super().set_accept_enabled(enabled and self.has_idle_thread())

    def accept(self, listener: Any) -> None:
        super().accept(listener)
        if not self.has_idle_thread():
            super().set_accept_enabled(False)
