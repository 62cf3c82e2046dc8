"""A scope with one of everything a bundle carries, built through the HTTP API,
and every read of it: the round-trip tests compare these before and after."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.conftest import ApiClient, create_scope
from tests.handoffs import helpers as handoff
from tests.lifecycle.helpers import close, hold, note_body, purge, redact, release

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
READ_AT = T0 + timedelta(hours=3)
SESSIONS = ("sess-1", "sess-2", "sess-3")
CONTENT = "/v1/sources/content"
NOTES = "/v1/sources/working-notes"


@dataclass
class World:
    scope_id: str
    # (url, body, status) of every accepted capture, to replay after a restore
    captures: list[tuple[str, dict[str, Any], int]] = field(default_factory=list)
    source_ids: list[str] = field(default_factory=list)


def _capture(
    api: ApiClient, world: World, url: str, body: dict[str, Any]
) -> dict[str, Any]:
    response = api.post(url, {"scope_id": world.scope_id, **body})
    assert response.status_code in (200, 202), response.content
    world.captures.append((url, {"scope_id": world.scope_id, **body}, 202))
    world.source_ids.append(body["source_id"])
    return response.json()


def world_build(api: ApiClient) -> World:
    """Build at T0 (the caller travels there): content with floats and
    metadata, notes active / expired / closed / purged, a redacted Source, an
    envelope with revisions, a committed handoff, holds (one released), a
    conflicting capture (an attempt of its own) and a purge run."""
    world = World(create_scope(api, key="bundle", title="Bundled"))
    scope = world.scope_id
    _capture(
        api,
        world,
        CONTENT,
        {
            "source_id": "c-1",
            "content": "é\u2028 text",
            "metadata": {"w": 1.0, "k": [1.5, "v", None]},
        },
    )
    _capture(api, world, CONTENT, {"source_id": "c-2", "content": "plain text"})
    _capture(api, world, CONTENT, {"source_id": "c-secret", "content": "erase me"})
    conflict = api.post(
        CONTENT, {"scope_id": scope, "source_id": "c-2", "content": "other"}
    )
    assert conflict.status_code == 409, conflict.content
    soon, later = T0 + timedelta(hours=1), T0 + timedelta(days=30)
    for source_id, session_id, expires in (
        ("n-active", "sess-1", later),
        ("n-expired", "sess-1", soon),
        ("n-purged", "sess-2", soon),
        ("n-closed", "sess-3", later),
        ("n-held", "sess-3", soon),
    ):
        body = note_body(scope, source_id, session_id=session_id, expires_at=expires)
        body.pop("scope_id")
        _capture(api, world, NOTES, body)
    envelope = f"/v1/scopes/{scope}/sessions/sess-1/envelope"
    assert api.put(envelope, {"meta": {"x-colour": "blue"}}).status_code == 201
    patched = api.patch(envelope, {"meta": {"turnStatus": "idle"}})
    assert patched.status_code == 200, patched.content
    notes = f"/v1/scopes/{scope}/sessions/sess-1/working-notes"
    assert api.put(notes, {"notes": "the notes, 1.0"}).status_code == 200
    assert close(api, scope, "sess-3").status_code == 201
    assert hold(api, scope, "sess-3").status_code == 201
    released = hold(api, scope, reason="audit").json()["hold_id"]
    assert release(api, scope, released).status_code == 200
    assert redact(api, scope, "c-secret").status_code == 200
    handoff.committed(
        api,
        scope,
        handoff.draft([handoff.sc("c-1")], next_action=[handoff.sc("n-active")]),
    )
    return world


def world_age(api: ApiClient, world: World) -> None:
    """At T0 + 2 h: purge what has expired (n-expired, n-purged; n-held is held)."""
    assert purge(api, world.scope_id).status_code == 200


def world_reads(api: ApiClient, world: World) -> dict[str, Any]:
    """Every read of the world: (status, body) by what was read."""
    scope = f"/v1/scopes/{world.scope_id}"
    urls = [
        scope,
        f"{scope}/sources",
        f"{scope}/sources/window",
        f"{scope}/source-audit",
        f"{scope}/legal-holds",
    ]
    for source_id in world.source_ids:
        urls += [
            f"{scope}/sources/content/{source_id}",
            f"{scope}/source-audit/content/{source_id}",
            f"{scope}/source-attempts/content/{source_id}",
        ]
    for session_id in SESSIONS:
        urls += [
            f"{scope}/sessions/{session_id}/envelope",
            f"{scope}/sessions/{session_id}/working-notes",
        ]
    reads: dict[str, Any] = {}
    for url in urls:
        response = api.get(url)
        reads[url] = (response.status_code, response.json(), response.get("ETag"))
    for url in (handoff.CONTINUE, handoff.HINT):
        response = handoff.select(api, url, world.scope_id, "latest")
        reads[url] = (response.status_code, response.json())
    resolve = api.post(
        f"{scope}/evidence/resolve",
        {
            "purpose": "handoff",
            "refs": [{"name": "content", "source_id": s} for s in world.source_ids],
        },
    )
    reads["resolve"] = (resolve.status_code, resolve.json())
    return reads
