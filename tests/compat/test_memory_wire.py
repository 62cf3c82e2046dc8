"""The Memory operations this service serves, compared with a live reference server.

The same requests go to a reference server (PowerContext 1.4.1, access disabled)
and to ours; the answers must be equal once each server's generated
``artifact_id`` values are replaced by the order in which they were created (and
list cursors, opaque to clients, by whether there is one). Text search is compared
where both rank the same way; docs/api.md ("Memory") says where they do not.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.compat.reference_server import ReferenceServer, reference_server

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.compat,
    pytest.mark.django_db(transaction=True),
]

TARGET = {
    "type": "memory_entry",
    "family": "memory",
    "artifact_id": "m",
    "entry_id": "e",
}


class Server:
    """One server, its scope, and the artifact ids it generated, in order."""

    def __init__(self, url: str, token: str | None) -> None:
        self.url, self.token, self.scope = url, token, ""
        self.ids: list[str] = []

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        """``body`` with this server's scope; the answer with neutral ids."""
        status, answer = self.send(path, {"scope_id": self.scope, **body})
        return status, self._neutral(answer)

    def send(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(
            self.url + path,
            data=json.dumps(body).encode(),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())

    def _neutral(self, value: Any) -> Any:
        if isinstance(value, dict):
            return {key: self._field(key, item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._neutral(item) for item in value]
        return value

    def _field(self, key: str, value: Any) -> Any:
        if key == "artifact_id" and isinstance(value, str) and value.startswith("art_"):
            if value not in self.ids:
                self.ids.append(value)
            return f"#{self.ids.index(value)}"
        if key == "next_cursor":
            return value is not None
        return self._neutral(value)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReferenceServer]:
    with reference_server(tmp_path_factory.mktemp("memory"), access="disabled") as ref:
        yield ref


def _prepared(server: Server) -> Server:
    status, body = server.send(
        "/v1/scopes",
        {"title": "t", "summary": "s", "idempotency_key": uuid.uuid4().hex},
    )
    assert status == 201, body
    server.scope = body["scope_id"]
    return server


@pytest.fixture
def servers(
    reference: ReferenceServer, live_server: Any, make_token: Callable[..., str]
) -> tuple[Server, Server]:
    ours = Server(live_server.url, make_token("*:admin"))
    return _prepared(Server(reference.url, None)), _prepared(ours)


# Sent in order to both servers; each answer must be the same.
STEPS: list[tuple[str, dict[str, Any]]] = [
    ("/v1/memory/remember", {"kind": " decision ", "text": "  cafe\u0301 first  "}),
    ("/v1/memory/remember", {"kind": "fact", "text": "The parser uses a grammar"}),
    ("/v1/memory/remember", {"kind": "k", "text": "x", "reason": "because"}),
    ("/v1/memory/remember", {"kind": "k", "text": " \t "}),
    ("/v1/memory/remember", {"kind": "  ", "text": "t"}),
    ("/v1/memory/remember", {"kind": "k", "text": "a" * 8193}),
    ("/v1/memory/remember", {"kind": "k", "text": "t", "expected_revision": 1}),
    ("/v1/memory/search", {"query": "grammar parser"}),
    ("/v1/memory/search", {"query": "parser zebra", "mode": "fts", "limit": 1}),
    ("/v1/memory/entries/list", {"tag_filter": {"tags": ["a"], "match": "any"}}),
    ("/v1/memory/search", {"query": "parser", "tag_filter": {"tags": ["a"]}}),
    ("/v1/memory/entries/list", {"tag_filter": {"tags": [], "match": "x"}}),
    ("/v1/memory/entries/get", {"target": TARGET}),
    ("/v1/memory/entries/get", {"target": {**TARGET, "family": "x"}}),
    ("/v1/memory/flush", {"x": 1}),
]


def test_memory_answers_are_the_references(servers: tuple[Server, Server]) -> None:
    reference, ours = servers
    differences = {}
    for number, (path, body) in enumerate(STEPS):
        expected, found = reference.post(path, body), ours.post(path, body)
        if found != expected:
            differences[f"{number} {path}"] = {"reference": expected, "ours": found}

    assert differences == {}


def test_the_entry_list_holds_every_record_in_artifact_id_order(
    servers: tuple[Server, Server],
) -> None:
    texts = {}
    for server in servers:
        for text in ("one", "two", "three"):
            server.post("/v1/memory/remember", {"kind": "k", "text": text})
        status, first = server.post("/v1/memory/entries/list", {"limit": 2})
        _, raw = server.send(
            "/v1/memory/entries/list", {"scope_id": server.scope, "limit": 2}
        )
        status, rest = server.post(
            "/v1/memory/entries/list", {"limit": 2, "cursor": raw["next_cursor"]}
        )
        entries = first["entries"] + rest["entries"]
        ids = [server.ids[int(e["artifact"]["artifact_id"][1:])] for e in entries]
        assert (status, first["next_cursor"], rest["next_cursor"]) == (200, True, False)
        assert ids == sorted(ids)
        texts[server.url] = sorted(e["text"] for e in entries)

    assert len(set(map(tuple, texts.values()))) == 1
