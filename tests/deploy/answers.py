"""A small registry written through the API, and every answer the API gives about it.

``registry_write`` fills a live service with two scopes of Sources (content and
working notes, a replay and a conflict among the attempts), envelopes with
revisions and working notes, and a handoff with two revisions. ``every_answer``
reads back everything a client can read about it - each scope, each Source
(record, audit, attempts), each envelope (body, ETag, working notes, fold), each
handoff revision (continue, hint) - so that two services can be compared answer
by answer, e.g. before a backup and after its restore. Cursors are followed to the
end and left out of the comparison: they are signed with a timestamp.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

SESSIONS = ("sess-a", "sess/b")


@dataclass
class Registry:
    """What ``registry_write`` created: the ids to read back."""

    scopes: list[str] = field(default_factory=list)
    handoff_revisions: dict[str, int] = field(default_factory=dict)


def _ok(response: httpx.Response, *statuses: int) -> Any:
    assert response.status_code in statuses, (response.status_code, response.text)
    return response.json()


def _session(scope_id: str, session_id: str, suffix: str = "envelope") -> str:
    return f"/v1/scopes/{scope_id}/sessions/{quote(session_id, safe='')}/{suffix}"


def registry_write(client: httpx.Client, *, sources_per_scope: int = 12) -> Registry:
    """Write the registry through ``client`` (a ``*:admin`` token)."""
    registry = Registry()
    for index in range(2):
        scope_id = _ok(
            client.post(
                "/v1/scopes",
                json={
                    "title": f"Deploy check {index}",
                    "summary": "Written through the proxy",
                    "idempotency_key": f"deploy-{index}",
                },
            ),
            201,
        )["scope_id"]
        registry.scopes.append(scope_id)
        _sources_write(client, scope_id, sources_per_scope)
        _envelopes_write(client, scope_id)
        registry.handoff_revisions[scope_id] = _handoff_write(client, scope_id)
    return registry


def _sources_write(client: httpx.Client, scope_id: str, count: int) -> None:
    for number in range(count):
        body = {
            "scope_id": scope_id,
            "source_id": f"c-{number}",
            "content": f"fact {number} \u00e9\u2603\U0001f680",
            "metadata": {"n": number, "tags": ["deploy", str(number)]},
        }
        _ok(client.post("/v1/sources/content", json=body), 202)
    replay = {"scope_id": scope_id, "source_id": "c-0"}
    original = {**replay, "content": "fact 0 \u00e9\u2603\U0001f680"}
    _ok(
        client.post(
            "/v1/sources/content",
            json={**original, "metadata": {"n": 0, "tags": ["deploy", "0"]}},
        ),
        202,
    )
    _ok(client.post("/v1/sources/content", json={**replay, "content": "other"}), 409)
    for number, session_id in enumerate(SESSIONS):
        note = {
            "scope_id": scope_id,
            "source_id": f"wn-{number}",
            "content": f"an inspection note {number}",
            "session_id": session_id,
            "note_kind": "inspection",
        }
        _ok(client.post("/v1/sources/working-notes", json=note), 202)


def _envelopes_write(client: httpx.Client, scope_id: str) -> None:
    for session_id in SESSIONS:
        _ok(
            client.put(
                _session(scope_id, session_id),
                json={"meta": {"personaId": "p-1", "x-deploy": 2.5}},
            ),
            200,
            201,
        )
        _ok(
            client.patch(
                _session(scope_id, session_id),
                json={"meta": {"cwd": "/srv", "statusSlot": "working"}},
            ),
            200,
        )
        _ok(
            client.put(
                _session(scope_id, session_id, "working-notes"),
                json={"notes": f"notes of {session_id}"},
            ),
            200,
        )


def _handoff_write(client: httpx.Client, scope_id: str) -> int:
    """Commit two revisions of the scope's handoff; return the last number."""
    base = None
    for revision in (1, 2):
        draft = {
            "objective": f"Ship revision {revision}",
            "state": [
                {
                    "text": "the facts hold",
                    "citations": [
                        {
                            "kind": "source",
                            "source_ref": {"name": "content", "source_id": "c-1"},
                        },
                        {
                            "kind": "source",
                            "source_ref": {"name": "content", "source_id": "wn-0"},
                        },
                    ],
                }
            ],
            "disposition": "continuable",
            "next_action": None,
            "omissions": [],
        }
        prepared = _ok(
            client.post(
                "/v1/handoff/finalize", json={"scope_id": scope_id, "draft": draft}
            ),
            200,
        )
        assert prepared["base"] == base, prepared
        committed = _ok(
            client.post(
                "/v1/handoff/commit", json={"scope_id": scope_id, "handoff": prepared}
            ),
            200,
        )
        base = committed["reference"]
    return revision


def _walk(client: httpx.Client, path: str) -> list[Any]:
    """Every item of a list, following ``next_cursor`` to the end."""
    items: list[Any] = []
    params: dict[str, Any] = {"limit": 5}
    while True:
        page = _ok(client.get(path, params=params), 200)
        items.extend(page["items"])
        if page["next_cursor"] is None:
            return items
        params = {"limit": 5, "cursor": page["next_cursor"]}


def every_answer(client: httpx.Client, registry: Registry) -> dict[str, Any]:
    """Everything ``client`` can read about ``registry``, keyed by request."""
    answers: dict[str, Any] = {"GET /v1/scopes": _walk(client, "/v1/scopes")}
    for scope_id in registry.scopes:
        scope = f"/v1/scopes/{scope_id}"
        answers[f"GET {scope}"] = _ok(client.get(scope), 200)
        sources = _walk(client, f"{scope}/sources")
        answers[f"GET {scope}/sources"] = sources
        answers[f"GET {scope}/source-audit"] = _walk(client, f"{scope}/source-audit")
        for record in sources:
            identity = f"{record['source_type']}/{quote(record['source_id'], safe='')}"
            for kind in ("sources", "source-audit"):
                path = f"{scope}/{kind}/{identity}"
                answers[f"GET {path}"] = _ok(client.get(path), 200)
            path = f"{scope}/source-attempts/{identity}"
            answers[f"GET {path}"] = _walk(client, path)
        for session_id in SESSIONS:
            envelope = client.get(_session(scope_id, session_id))
            answers[f"GET {_session(scope_id, session_id)}"] = (
                _ok(envelope, 200),
                envelope.headers["ETag"],
            )
            for suffix in ("working-notes", "working-notes/fold"):
                path = _session(scope_id, session_id, suffix)
                answers[f"GET {path}"] = client.get(path).text
        answers.update(_handoff_answers(client, scope_id, registry))
    return answers


def _handoff_answers(
    client: httpx.Client, scope_id: str, registry: Registry
) -> dict[str, Any]:
    answers = {}
    selections: list[dict[str, Any]] = [{"selection": "latest"}]
    selections += [
        {
            "selection": "exact",
            "revision": {
                "family": "handoff",
                "artifact_id": "handoff",
                "revision": number,
            },
        }
        for number in range(1, registry.handoff_revisions[scope_id] + 1)
    ]
    for selection in selections:
        body = {"scope_id": scope_id, **selection}
        for operation in ("continue", "hint"):
            response = client.post(f"/v1/handoff/{operation}", json=body)
            answers[f"POST /v1/handoff/{operation} {selection}"] = _ok(response, 200)
    return answers
