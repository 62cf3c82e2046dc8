"""A tiny in-memory HTTP server speaking the part of the API the recorder uses,
with bugs that can be switched on, to prove the checker catches them.

Everything happens under one lock, so with no bug switched on it is linearizable
by construction. The bugs:

- ``ignore_if_match``: envelope and working-notes writes never answer ``412``;
- ``replay_new_position``: an exact replay of a capture is appended to the journal
  again and answered with the new position.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

HOST_KEYS = {"selectedModel", "x-a", "x-b"}
ENVELOPE = re.compile(r"^/v1/scopes/([^/]+)/sessions/([^/]+)/(envelope|working-notes)$")
SOURCE = re.compile(r"^/v1/scopes/([^/]+)/sources/content/([^/]+)$")
SOURCES = re.compile(r"^/v1/scopes/([^/]+)/sources$")


@dataclass
class Store:
    ignore_if_match: bool = False
    replay_new_position: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)
    scopes: dict[str, str] = field(default_factory=dict)
    envelopes: dict[tuple[str, str], tuple[int, dict[str, Any]]] = field(
        default_factory=dict
    )
    sources: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)
    journals: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    def handle(
        self, method: str, path: str, query: dict[str, Any], body: Any, tag: str | None
    ) -> tuple[int, Any, dict[str, str]]:
        with self.lock:
            if (method, path) == ("POST", "/v1/scopes"):
                scope = self.scopes.setdefault(
                    body["idempotency_key"], f"scp_{len(self.scopes)}"
                )
                self.journals.setdefault(scope, [])
                return 201, {"scope_id": scope}, {}
            if (method, path) == ("POST", "/v1/sources/content"):
                return self.capture(body)
            if match := ENVELOPE.match(path):
                scope, session, what = match.groups()
                return self.envelope(method, (scope, session), what, body, tag)
            if match := SOURCE.match(path):
                found = self.sources.get(match.groups())
                if found is None:
                    return 404, {"error": {"code": "source_not_found"}}, {}
                return 200, {"content": found[0], "position": found[1]}, {}
            if match := SOURCES.match(path):
                journal = self.journals[match.group(1)]
                limit = int(query.get("limit", ["50"])[0])
                items = [
                    {"position": n, "source_id": s, "content": c}
                    for n, (s, c) in enumerate(journal[:limit], 1)
                ]
                return 200, {"items": items, "next_cursor": None}, {}
        return 404, {"error": {"code": "not_found"}}, {}

    def capture(self, body: Any) -> tuple[int, Any, dict[str, str]]:
        scope, source_id, content = body["scope_id"], body["source_id"], body["content"]
        journal = self.journals[scope]
        found = self.sources.get((scope, source_id))
        headers = {}
        if found is not None and found[0] != content:
            return 409, {"error": {"code": "source_conflict"}}, {}
        if found is not None and not self.replay_new_position:
            position = found[1]
            headers["Idempotent-Replayed"] = "true"
        else:
            journal.append((source_id, content))
            position = len(journal)
            if found is None:
                self.sources[(scope, source_id)] = (content, position)
            else:
                headers["Idempotent-Replayed"] = "true"
        receipt = {
            "status": "accepted",
            "source": {"name": "content", "source_id": source_id},
            "position": position,
        }
        return 202, receipt, headers

    def envelope(
        self, method: str, key: tuple[str, str], what: str, body: Any, tag: str | None
    ) -> tuple[int, Any, dict[str, str]]:
        current = self.envelopes.get(key)
        if method == "GET":
            if current is None:
                return 404, {"error": {"code": "session_not_found"}}, {}
            version, meta = current
            return 200, {"version": version, "meta": meta}, {"ETag": f'"{version}"'}
        stale = current is None or tag != f'"{current[0]}"'
        if tag is not None and stale and not self.ignore_if_match:
            return 412, {"error": {"code": "precondition_failed"}}, {}
        if method == "DELETE" and current is None:
            return 200, {"notes": None, "version": None}, {}
        version, meta = current if current is not None else (0, {})
        new = dict(meta)
        if what == "working-notes":
            changes = {"workingNotes": body["notes"] if method == "PUT" else None}
        else:
            changes = body["meta"]
            if method == "PUT":
                new = {k: v for k, v in meta.items() if k not in HOST_KEYS}
        for name, value in changes.items():
            if value in (None, ""):
                new.pop(name, None)
            else:
                new[name] = value
        if current is None or new != meta:
            version += 1
            self.envelopes[key] = (version, new)
        status = 201 if current is None else 200
        if what == "working-notes":
            return status, {"notes": new.get("workingNotes"), "version": version}, {}
        return status, {"version": version, "meta": new}, {"ETag": f'"{version}"'}


class _Handler(BaseHTTPRequestHandler):
    store: Store

    def _serve(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        status, answer, headers = self.store.handle(
            self.command,
            parts.path,
            parse_qs(parts.query),
            body,
            self.headers.get("If-Match"),
        )
        data = json.dumps(answer).encode()
        self.send_response(status)
        for name, value in {**headers, "Content-Type": "application/json"}.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serving(store: Store) -> Iterator[str]:
    """Serve ``store`` on a free loopback port; yields the base URL."""
    handler = type("Handler", (_Handler,), {"store": store})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
