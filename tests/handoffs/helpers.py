"""Builders for handoff requests: Sources to cite, citations, drafts, calls."""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from tests.conftest import ApiClient

FINALIZE = "/v1/handoff/finalize"
COMMIT = "/v1/handoff/commit"
CONTINUE = "/v1/handoff/continue"
HINT = "/v1/handoff/hint"
PREPARE = "/v1/handoff/prepare"
ACTIVATE = "/v1/handoff/activate"


def resolve_url(scope_id: str) -> str:
    return f"/v1/scopes/{scope_id}/evidence/resolve"


def capture(
    api: ApiClient, scope_id: str, source_id: str, content: str = "a fact"
) -> None:
    response = api.post(
        "/v1/sources/content",
        {"scope_id": scope_id, "source_id": source_id, "content": content},
    )
    assert response.status_code == 202, response.content


def note(
    api: ApiClient,
    scope_id: str,
    source_id: str,
    *,
    content: str = "an inspection note",
    expires_at: datetime | None = None,
) -> None:
    response = api.post(
        "/v1/sources/working-notes",
        {
            "scope_id": scope_id,
            "source_id": source_id,
            "content": content,
            "session_id": "sess-1",
            "note_kind": "inspection",
            "expires_at": None if expires_at is None else expires_at.isoformat(),
        },
    )
    assert response.status_code == 202, response.content


def sc(source_id: str, name: str = "content") -> dict[str, Any]:
    """A Source citation."""
    return {"kind": "source", "source_ref": {"name": name, "source_id": source_id}}


def hc(revision: int, artifact_id: str = "handoff") -> dict[str, Any]:
    """A citation of a revision of the scope's handoff artifact."""
    return {
        "kind": "artifact",
        "artifact_ref": {
            "family": "handoff",
            "artifact_id": artifact_id,
            "revision": revision,
        },
    }


def href(revision: int) -> dict[str, Any]:
    return {"family": "handoff", "artifact_id": "handoff", "revision": revision}


def statement(text: str, *citations: dict[str, Any]) -> dict[str, Any]:
    return {"text": text, "citations": list(citations)}


def draft(
    *state: list[dict[str, Any]],
    next_action: list[dict[str, Any]] | None = None,
    omissions: tuple[dict[str, Any], ...] = (),
    objective: str = "Finish the parser",
    disposition: str = "continuable",
) -> dict[str, Any]:
    """A draft: one state statement per citation list in ``state``."""
    return {
        "objective": objective,
        "state": [statement(f"state {i}", *cites) for i, cites in enumerate(state)],
        "disposition": disposition,
        "next_action": None
        if next_action is None
        else statement("do this next", *next_action),
        "omissions": list(omissions),
    }


def content_of(body: dict[str, Any]) -> dict[str, Any]:
    """The HandoffContent the server should build from a draft."""
    return {"generation": None, "schema": "powercontext.handoff.v1", **body}


def prepared(
    scope_id: str, body: dict[str, Any], base: int | None = None
) -> dict[str, Any]:
    """A PreparedHandoff written by hand (as finalize would answer)."""
    return {
        "generation": None,
        "schema": "powercontext.prepared-handoff.v1",
        "scope_id": scope_id,
        "base": None if base is None else href(base),
        "content": content_of(body),
    }


def finalize(api: ApiClient, scope_id: str, body: dict[str, Any]) -> Any:
    return api.post(FINALIZE, {"scope_id": scope_id, "draft": body})


def commit(api: ApiClient, scope_id: str, handoff: dict[str, Any]) -> Any:
    return api.post(COMMIT, {"scope_id": scope_id, "handoff": handoff})


def committed(api: ApiClient, scope_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """Finalize and commit ``body``; the CommittedHandoff."""
    response = finalize(api, scope_id, body)
    assert response.status_code == 200, response.content
    response = commit(api, scope_id, response.json())
    assert response.status_code == 200, response.content
    return response.json()


def select(
    api: ApiClient, url: str, scope_id: str, selection: str, **fields: Any
) -> Any:
    return api.post(url, {"scope_id": scope_id, "selection": selection, **fields})


def mutated(body: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    """A copy of ``body`` with ``value`` at ``path``; ``...`` deletes the key."""
    body = copy.deepcopy(body)
    node = body
    for key in path[:-1]:
        node = node[key]
    if value is ...:
        node.pop(path[-1])
    else:
        node[path[-1]] = value
    return body
