"""Every text this service writes for an agent to read, against the reference's.

The continuity hint (``POST /v1/handoff/hint``) is parsed by hosts, so for the same
inputs its ``content`` must be the reference server's byte for byte: the same
requests go to a live reference server (``reference_server.py``) and to ours, and
the hints are compared after the one value that differs by construction, the
server-generated ``scope_id``, is put in place. (The working-notes fold is ours
alone: the reference has no such operation, so there is nothing to compare it
with.)
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.compat.reference_server import (
    STATIC_TOKEN,
    ReferenceServer,
    reference_server,
)
from tests.handoffs.helpers import COMMIT, FINALIZE, HINT, hc, href, sc

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.compat,
    pytest.mark.django_db(transaction=True),
]

ODD = 'quote " backslash \\ tab \t nl \n zw \u200b rlo \u202e ls \u2028 del \x7f 🙂 é'


class Server:
    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token

    def post(self, path: str, body: Any) -> tuple[int, Any]:
        request = urllib.request.Request(
            self.url + path,
            data=json.dumps(body).encode(),
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Authorization": f"Bearer {self.token}",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read())


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReferenceServer]:
    with reference_server(tmp_path_factory.mktemp("reference-texts")) as server:
        yield server


@pytest.fixture
def servers(
    reference: ReferenceServer, live_server: Any, make_token: Callable[..., str]
) -> tuple[Server, Server]:
    return Server(reference.url, STATIC_TOKEN), Server(
        live_server.url, make_token("*:admin")
    )


def _scope(server: Server, key: str) -> str:
    status, body = server.post(
        "/v1/scopes",
        {"title": "Texts", "summary": "Hint texts", "idempotency_key": key},
    )
    assert status == 201, body
    return str(body["scope_id"])


def _capture(server: Server, scope_id: str, *source_ids: str) -> None:
    for source_id in source_ids:
        status, body = server.post(
            "/v1/sources/content",
            {"scope_id": scope_id, "source_id": source_id, "content": "x"},
        )
        assert status == 202, body


DRAFTS: dict[str, dict[str, Any]] = {
    "plain": {
        "objective": "Finish the parser",
        "state": [
            {"text": "lexer done", "citations": [sc("c-1"), sc("c-2")]},
            {"text": "parser half done", "citations": [sc("c-2")]},
        ],
        "disposition": "continuable",
        "next_action": {"text": "write the parser tests", "citations": [sc("c-1")]},
        "omissions": [
            {"text": "benchmarks not run", "citation": None},
            {"text": "see notes", "citation": sc("c-2")},
        ],
    },
    "blocked, odd text": {
        "objective": ODD,
        "state": [
            {"text": ODD, "citations": [sc("c-1")]},
            {"text": "waiting for review", "citations": [sc("c-2"), sc("c-1")]},
        ],
        "disposition": "blocked",
        "next_action": None,
        "omissions": [],
    },
    "odd next action and omission": {
        "objective": "Ship 1.0",
        "state": [{"text": "shipped", "citations": [sc("c-2")]}],
        "disposition": "continuable",
        "next_action": {"text": ODD, "citations": [sc("c-2"), sc("c-1")]},
        "omissions": [{"text": ODD, "citation": sc("c-1")}],
    },
}


def _hints(server: Server, scope_id: str, draft: dict[str, Any]) -> list[Any]:
    """The hints of one handoff, prepared, committed (twice: a revision citing
    the first) and selected every way; each as (status, body)."""
    _capture(server, scope_id, "c-1", "c-2")
    status, prepared = server.post(FINALIZE, {"scope_id": scope_id, "draft": draft})
    assert status == 200, prepared
    answers = [
        server.post(
            HINT, {"scope_id": scope_id, "selection": "prepared", "prepared": prepared}
        ),
        server.post(HINT, {"scope_id": scope_id, "selection": "latest"}),
    ]
    status, body = server.post(COMMIT, {"scope_id": scope_id, "handoff": prepared})
    assert status == 200, body
    second = {
        **draft,
        "state": [{"text": "follow-up", "citations": [hc(1), sc("c-1")]}],
    }
    status, prepared = server.post(FINALIZE, {"scope_id": scope_id, "draft": second})
    assert status == 200, prepared
    status, body = server.post(COMMIT, {"scope_id": scope_id, "handoff": prepared})
    assert status == 200, body
    for selection in ("latest", "exact"):
        for revision in (1, 2):
            extra = {"revision": href(revision)} if selection == "exact" else {}
            answers.append(
                server.post(
                    HINT, {"scope_id": scope_id, "selection": selection, **extra}
                )
            )
    answers.append(
        server.post(
            HINT,
            {
                "scope_id": scope_id,
                "selection": "exact",
                "revision": href(1),
                "max_bytes": 4000,
            },
        )
    )
    answers.append(
        server.post(
            HINT, {"scope_id": scope_id, "selection": "latest", "max_bytes": 200}
        )
    )
    return answers


@pytest.mark.parametrize("name", DRAFTS)
def test_hints_are_the_references_byte_for_byte(
    servers: tuple[Server, Server], name: str
) -> None:
    reference, ours = servers
    reference_scope, our_scope = _scope(reference, name), _scope(ours, name)

    expected = _hints(reference, reference_scope, DRAFTS[name])
    found = _hints(ours, our_scope, DRAFTS[name])

    expected = json.loads(json.dumps(expected).replace(reference_scope, our_scope))
    assert [status for status, _ in found] == [status for status, _ in expected]
    for (_, got), (_, want) in zip(found, expected, strict=True):
        assert got == want
