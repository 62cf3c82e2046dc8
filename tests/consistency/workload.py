"""Concurrent clients against a live server, recording a Jepsen-like history.

Each client thread picks an operation on one of the live keys, logs ``invoke``,
sends it over HTTP, and logs its completion: ``ok`` (it took effect as answered),
``fail`` (answered, and it did not take effect: ``404``, ``409``, ``412``) or
``info`` (a timeout, a reset connection, a ``5xx``: it may or may not have taken
effect). A thread that saw ``info`` carries on under a new process number, as in
Jepsen, because its previous operation may still be in flight.

Keys live for one *generation* (a scope of their own, four session envelopes,
twelve Source identities): after ``generation_ops`` operations the keeper thread
creates the next scope and the clients move on, so that each key's history stays
short enough to search (the checker is exponential in concurrency, not length).

Event shape (one JSON object a line in the history file)::

    {"type": "invoke"|"ok"|"fail"|"info", "f": str, "key": str,
     "value": ..., "process": int, "time": int (ns, monotonic, from the start)}

Keys: ``env:<scope>/<session>`` (an envelope), ``src:<scope>/<source_id>`` (a
Source identity); captures and Source reads also name their scope's journal
(``journal:<scope>``) in their invoke value, list reads are on the journal key.
Fault injections are events of process ``"nemesis"`` (``f`` is the fault).
"""

from __future__ import annotations

import itertools
import json
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TextIO

import httpx

SESSIONS = 4
IDENTITIES = 12
# Answers that tell nothing: the request may or may not have taken effect.
INDETERMINATE = range(500, 600)


class Recorder:
    """A thread-safe, append-only history; each event is also written to
    ``stream`` (JSON Lines) as it happens, when given, so a crash keeps it."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.events: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._start = time.monotonic_ns()
        self._processes = itertools.count()
        self._stream = stream

    def process(self) -> int:
        with self._lock:
            return next(self._processes)

    def log(self, **event: Any) -> None:
        with self._lock:
            event["time"] = time.monotonic_ns() - self._start
            self.events.append(event)
            if self._stream is not None:
                self._stream.write(json.dumps(event, sort_keys=True) + "\n")

    def fault(self, f: str, value: Any) -> None:
        self.log(type="info", f=f, key=None, value=value, process="nemesis")


@dataclass
class Generation:
    scope_id: str
    ops: int = 0

    def envelope(self, rng: random.Random) -> tuple[str, str]:
        session = f"s{rng.randrange(SESSIONS)}"
        return f"env:{self.scope_id}/{session}", (
            f"/v1/scopes/{self.scope_id}/sessions/{session}"
        )

    def identity(self, rng: random.Random) -> str:
        return f"i{rng.randrange(IDENTITIES)}"

    @property
    def journal(self) -> str:
        return f"journal:{self.scope_id}"


@dataclass
class Outcome:
    type: str
    value: Any


@dataclass
class Workload:
    """``threads`` clients on ``base_url``; ``run(seconds)`` or ``start``/``stop``."""

    base_url: str
    token: str
    recorder: Recorder
    threads: int = 16
    generation_ops: int = 400
    timeout: float = 10.0
    seed: int = 0
    generations: int = 0
    _current: Generation | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _workers: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _values: itertools.count = field(default_factory=lambda: itertools.count(1))

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.base_url,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=self.timeout,
        )

    # --- lifecycle ---------------------------------------------------------------

    def start(self) -> None:
        self._current = self._new_generation()
        keeper = threading.Thread(target=self._keep, name="keeper", daemon=True)
        self._workers.append(keeper)
        for number in range(self.threads):
            worker = threading.Thread(
                target=self._client_loop, args=(number,), name=f"client-{number}"
            )
            self._workers.append(worker)
        for thread in self._workers:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._workers:
            thread.join(timeout=self.timeout + 30)

    def _new_generation(self) -> Generation:
        """A new scope, retried (same idempotency key) until the service answers."""
        key = f"consistency-{self.seed}-{self.generations}"
        body = {"title": "Consistency", "summary": "campaign", "idempotency_key": key}
        with self.client() as client:
            while True:
                try:
                    response = client.post("/v1/scopes", json=body)
                    if response.status_code == 201:
                        self.generations += 1
                        return Generation(response.json()["scope_id"])
                except httpx.TransportError:
                    pass
                if self._stop.wait(0.5):
                    raise RuntimeError("stopped before a scope could be created")

    def _keep(self) -> None:
        while not self._stop.wait(0.2):
            assert self._current is not None
            if self._current.ops >= self.generation_ops:
                try:
                    self._current = self._new_generation()
                except RuntimeError:
                    return

    # --- clients -------------------------------------------------------------------

    def _client_loop(self, number: int) -> None:
        rng = random.Random(f"{self.seed}-{number}")
        process = self.recorder.process()
        seen: dict[str, int] = {}
        with self.client() as client:
            while not self._stop.is_set():
                generation = self._current
                assert generation is not None
                with self._lock:
                    generation.ops += 1
                    value = next(self._values)
                key, f, invoke, send = self._pick(generation, rng, value, seen)
                self.recorder.log(
                    type="invoke", f=f, key=key, value=invoke, process=process
                )
                outcome = send(client)
                self.recorder.log(
                    type=outcome.type,
                    f=f,
                    key=key,
                    value=outcome.value,
                    process=process,
                )
                if outcome.type == "info":
                    process = self.recorder.process()
                    self._stop.wait(rng.uniform(0.05, 0.3))
                elif outcome.type == "ok" and key.startswith("env:"):
                    version = outcome.value.get("version")
                    seen[key] = seen.get(key) if version is None else version

    def _pick(
        self, gen: Generation, rng: random.Random, n: int, seen: dict[str, int]
    ) -> tuple[str, str, Any, Callable[[httpx.Client], Outcome]]:
        roll = rng.random()
        if roll < 0.52:
            key, base = gen.envelope(rng)
            if_match = seen.get(key) if rng.random() < 0.5 else None
            return envelope_operation(rng, key, base, if_match, n)
        source_id = gen.identity(rng)
        key = f"src:{gen.scope_id}/{source_id}"
        if roll < 0.80:
            variant = "A" if rng.random() < 0.8 else "B"
            content = f"{source_id} content {variant}"
            invoke = {
                "source_id": source_id,
                "content": content,
                "journal": gen.journal,
            }
            return key, "capture", invoke, capture_sender(gen.scope_id, invoke)
        if roll < 0.92:
            invoke = {"source_id": source_id, "journal": gen.journal}
            return key, "source_read", invoke, source_read_sender(gen.scope_id, invoke)
        limit = rng.choice([3, 100])
        return (
            gen.journal,
            "list_read",
            {"limit": limit},
            list_read_sender(gen.scope_id, limit),
        )


# --- One operation each: what is sent, how the answer is classified --------------------


def _request(
    client: httpx.Client,
    method: str,
    path: str,
    body: Any = None,
    if_match: int | None = None,
    params: dict[str, Any] | None = None,
) -> httpx.Response | Outcome:
    headers = {"If-Match": f'"{if_match}"'} if if_match is not None else {}
    try:
        response = client.request(
            method, path, json=body, headers=headers, params=params
        )
    except httpx.TransportError as error:
        return Outcome("info", {"error": type(error).__name__})
    if response.status_code in INDETERMINATE:
        return Outcome("info", {"status": response.status_code})
    return response


def _unexpected(response: httpx.Response) -> Outcome:
    """An answer the contract does not allow here: recorded as a fail carrying the
    status, which no model accepts, so the checker reports it."""
    return Outcome(
        "fail", {"status": response.status_code, "body": response.text[:500]}
    )


def envelope_operation(
    rng: random.Random, key: str, base: str, if_match: int | None, n: int
) -> tuple[str, str, Any, Callable[[httpx.Client], Outcome]]:
    roll = rng.random()
    if roll < 0.3:
        return key, "env_read", None, lambda c: _envelope_read(c, base)
    if roll < 0.55:
        meta = {"x-a": n, "x-b": rng.choice(["u", "v", None])}
        if rng.random() < 0.3:
            meta["selectedModel"] = f"m{n % 7}"
        invoke = {"meta": meta, "if_match": if_match}
        return key, "env_put", invoke, _writer("PUT", f"{base}/envelope", invoke)
    if roll < 0.75:
        meta = rng.choice(
            [{"turnCursor": n}, {"statusSlot": f"s{n}"}, {"turnCursor": None}]
        )
        invoke = {"meta": meta, "if_match": if_match}
        return key, "env_patch", invoke, _writer("PATCH", f"{base}/envelope", invoke)
    if roll < 0.92:
        invoke = {"notes": f"note {n}", "if_match": if_match}
        return key, "notes_put", invoke, _notes("PUT", base, invoke)
    invoke = {"if_match": if_match}
    return key, "notes_delete", invoke, _notes("DELETE", base, invoke)


def _envelope_read(client: httpx.Client, base: str) -> Outcome:
    response = _request(client, "GET", f"{base}/envelope")
    if isinstance(response, Outcome):
        return response
    if response.status_code == 404:
        return Outcome("fail", {"status": 404})
    if response.status_code != 200:
        return _unexpected(response)
    body = response.json()
    if response.headers.get("ETag") != f'"{body["version"]}"':
        return _unexpected(response)
    return Outcome("ok", {"version": body["version"], "meta": body["meta"]})


def _writer(method: str, path: str, invoke: Any) -> Callable[[httpx.Client], Outcome]:
    def send(client: httpx.Client) -> Outcome:
        response = _request(
            client, method, path, {"meta": invoke["meta"]}, invoke["if_match"]
        )
        if isinstance(response, Outcome):
            return response
        if response.status_code == 412:
            return Outcome("fail", {"status": 412})
        if response.status_code not in (200, 201):
            return _unexpected(response)
        body = response.json()
        return Outcome(
            "ok",
            {
                "status": response.status_code,
                "version": body["version"],
                "meta": body["meta"],
            },
        )

    return send


def _notes(method: str, base: str, invoke: Any) -> Callable[[httpx.Client], Outcome]:
    body = {"notes": invoke["notes"]} if method == "PUT" else None

    def send(client: httpx.Client) -> Outcome:
        response = _request(
            client, method, f"{base}/working-notes", body, invoke["if_match"]
        )
        if isinstance(response, Outcome):
            return response
        if response.status_code == 412:
            return Outcome("fail", {"status": 412})
        if response.status_code not in (200, 201):
            return _unexpected(response)
        answer = response.json()
        return Outcome(
            "ok",
            {
                "status": response.status_code,
                "version": answer["version"],
                "notes": answer["notes"],
            },
        )

    return send


def capture_sender(scope_id: str, invoke: Any) -> Callable[[httpx.Client], Outcome]:
    body = {
        "scope_id": scope_id,
        "source_id": invoke["source_id"],
        "content": invoke["content"],
    }

    def send(client: httpx.Client) -> Outcome:
        response = _request(client, "POST", "/v1/sources/content", body)
        if isinstance(response, Outcome):
            return response
        if response.status_code == 409:
            return Outcome("fail", {"status": 409})
        if response.status_code != 202:
            return _unexpected(response)
        receipt = response.json()
        expected = {
            "status": "accepted",
            "source": {"name": "content", "source_id": invoke["source_id"]},
            "position": receipt.get("position"),
        }
        if receipt != expected:
            return _unexpected(response)
        replayed = response.headers.get("Idempotent-Replayed") == "true"
        return Outcome("ok", {"position": receipt["position"], "replayed": replayed})

    return send


def source_read_sender(scope_id: str, invoke: Any) -> Callable[[httpx.Client], Outcome]:
    path = f"/v1/scopes/{scope_id}/sources/content/{invoke['source_id']}"

    def send(client: httpx.Client) -> Outcome:
        response = _request(client, "GET", path)
        if isinstance(response, Outcome):
            return response
        if response.status_code == 404:
            return Outcome("fail", {"status": 404})
        if response.status_code != 200:
            return _unexpected(response)
        record = response.json()
        return Outcome(
            "ok", {"content": record["content"], "position": record["position"]}
        )

    return send


def list_read_sender(scope_id: str, limit: int) -> Callable[[httpx.Client], Outcome]:
    path = f"/v1/scopes/{scope_id}/sources"

    def send(client: httpx.Client) -> Outcome:
        response = _request(client, "GET", path, params={"limit": limit})
        if isinstance(response, Outcome):
            return response
        if response.status_code != 200:
            return _unexpected(response)
        items = [
            [item["position"], item["source_id"], item["content"]]
            for item in response.json()["items"]
        ]
        return Outcome("ok", {"items": items})

    return send
