"""Many clients writing while a fault hits the service, and what they were told.

``fault_stream`` runs a write function from 16 threads, each with its own HTTP
connection, until a number of writes was acknowledged; then it injects the fault
(the database stopped and started again, a worker killed) while the threads keep
writing, and stops once enough writes were acknowledged after it. Every request
and its answer is kept as a ``Sent`` for the test to check against the rows.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import httpx
import psycopg

from tests.robustness.conftest import Service


@dataclass(frozen=True)
class Sent:
    """One write: who sent it, what, and the answer (``status`` None: no answer)."""

    thread: int
    index: int
    method: str
    path: str
    body: Any
    status: int | None
    answer: Any
    at: float

    @property
    def acknowledged(self) -> bool:
        return self.status in (200, 201)


# write(client, thread, index, previous) -> (method, path, body, headers); previous
# is what the thread sent last (None at first), so a write can retry or follow up.
Write = Callable[
    [httpx.Client, int, int, "Sent | None"], tuple[str, str, Any, dict[str, str]]
]


@dataclass
class StreamResult:
    sent: list[Sent]
    fault_started: float
    fault_ended: float

    def after_fault(self) -> list[Sent]:
        return [s for s in self.sent if s.at > self.fault_ended]

    def last_of_each_thread(self) -> dict[int, Sent]:
        """Each thread's last request (a thread sends one at a time, in order)."""
        return {s.thread: s for s in self.sent}

    def last_ones_after_fault(self) -> list[Sent]:
        """The threads' last requests that were sent after the fault ended: the
        service must have recovered for each of them."""
        return [
            s for s in self.last_of_each_thread().values() if s.at > self.fault_ended
        ]

    def statuses(self) -> set[int | None]:
        return {s.status for s in self.sent}

    def summary(self) -> str:
        """Figures for docs/reliability.md (shown with ``pytest -rP``)."""
        counts = Counter("none" if s.status is None else s.status for s in self.sent)
        outage = self.fault_ended - self.fault_started
        return f"{len(self.sent)} writes {dict(counts)}; fault lasted {outage:.1f}s"


def fault_stream(
    service: Service,
    write: Write,
    *,
    fault: Callable[[], None],
    before: int,
    after: int,
    threads: int = 16,
) -> StreamResult:
    """``write`` gives each thread's next request (see ``Write``).

    Threads send one write after another; after an unanswered or refused write a
    thread pauses 0.1 s, then sends its next one. ``fault`` runs once ``before``
    writes were acknowledged; the stream stops ``after`` acknowledgements later.
    """
    sent: list[Sent] = []
    lock = threading.Lock()
    acknowledged = threading.Semaphore(0)
    stop = threading.Event()

    def run(thread: int) -> None:
        with service.client(timeout=60) as client:
            index, previous = 0, None
            while not stop.is_set():
                method, path, body, headers = write(client, thread, index, previous)
                status, answer = _send(client, method, path, body, headers)
                record = Sent(thread, index, method, path, body, status, answer, 0.0)
                previous = replace(record, at=time.monotonic())
                with lock:
                    sent.append(previous)
                index += 1
                if status in (200, 201):
                    acknowledged.release()
                else:
                    time.sleep(0.1)

    with ThreadPoolExecutor(max_workers=threads) as pool:
        senders = [pool.submit(run, thread) for thread in range(threads)]
        try:
            _acquire(acknowledged, before)
            started = time.monotonic()
            fault()
            ended = time.monotonic()
            _acquire(acknowledged, after, timeout=90)
        finally:
            stop.set()
        for sender in senders:
            sender.result(timeout=120)
    return StreamResult(sorted(sent, key=lambda s: s.at), started, ended)


def _send(
    client: httpx.Client, method: str, path: str, body: Any, headers: dict[str, str]
) -> tuple[int | None, Any]:
    try:
        response = client.request(method, path, json=body, headers=headers)
    except httpx.TransportError:
        return None, None
    return response.status_code, response.json()


def _acquire(semaphore: threading.Semaphore, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    for _ in range(count):
        remaining = deadline - time.monotonic()
        assert semaphore.acquire(timeout=max(remaining, 0.01)), "the writes stalled"


def restart_database(cluster: Any, mode: str, down: float = 3.0) -> Callable[[], None]:
    """A fault: the cluster stopped with ``mode``, down ``down`` s, started again."""

    def fault() -> None:
        cluster.stop(mode)
        time.sleep(down)
        cluster.start()

    return fault


def rows(database_url: str, query: str, *params: Any) -> list[tuple[Any, ...]]:
    """Rows of a read-only query straight from the service's database."""
    with psycopg.connect(database_url, connect_timeout=10) as conn:
        return list(conn.execute(query, params).fetchall())  # type: ignore[arg-type]
