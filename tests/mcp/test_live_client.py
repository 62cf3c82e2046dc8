"""The official ``mcp`` client against a live granian: initialize, list, every
tool, each kind of tool error, auth, and an agent's story through MCP only."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from powercontext.mcp_server.tools import REGISTRY
from tests.handoffs.helpers import draft, sc
from tests.mcp.client import failed, ok, session
from tests.mcp.conftest import LiveService

SCOPE = {"title": "Parser work", "summary": "Rewrite the parser"}


async def _scope(mcp: ClientSession, key: str) -> str:
    created = await ok(mcp, "create_scope", **SCOPE, idempotency_key=key)
    return str(created["scope_id"])


def test_initialize_and_list(live: LiveService) -> None:
    async def steps(mcp: ClientSession) -> Any:
        return mcp.initialize_result, await mcp.list_tools()

    initialized, listed = session(live.url, live.token, steps)

    assert initialized.server_info.name == "powercontext"
    assert initialized.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS
    assert initialized.capabilities.tools is not None
    assert {tool.name for tool in listed.tools} == set(REGISTRY)


def test_every_tool_answers_through_the_client(live: LiveService) -> None:
    called: set[str] = set()

    async def steps(mcp: ClientSession) -> None:
        async def use(name: str, **arguments: Any) -> Any:
            called.add(name)
            return await ok(mcp, name, **arguments)

        created = await use("create_scope", **SCOPE, idempotency_key="every-tool")
        scope_id = created["scope_id"]
        scope = {"scope_id": scope_id}
        session_ = {**scope, "session_id": "sess/1"}
        assert (await use("get_scope", **scope))["scope_id"] == scope_id
        listed = await use("list_scopes", query="Parser", query_field="title")
        assert scope_id in [s["scope_id"] for s in listed["items"]]
        await use("capture_content_source", **scope, source_id="c-1", content="fact")
        await use(
            "capture_working_note",
            **scope,
            source_id="n-1",
            content="tried the regex approach",
            session_id="sess/1",
            note_kind="abandoned_approach",
        )
        got = await use("get_source", **scope, source_type="content", source_id="c-1")
        assert got["content"] == "fact"
        page = await use("list_sources", **scope, limit=10)
        assert [s["source_id"] for s in page["items"]] == ["c-1", "n-1"]
        found = await use("search_sources", **scope, q="regex")
        assert [s["source_id"] for s in found["items"]] == ["n-1"]
        refs = [{"name": "content", "source_id": "c-1"}]
        resolved = await use("resolve_evidence", **scope, purpose="handoff", refs=refs)
        assert resolved["items"][0]["status"] == "available"
        await use("working_notes_update", **session_, notes="parser: regex dropped")
        assert (await use("working_notes_get", **session_))["notes"] == (
            "parser: regex dropped"
        )
        envelope = await use("get_session_envelope", **session_)
        assert envelope["session_id"] == "sess/1"
        folded = await mcp.call_tool("fold_working_notes", session_)
        called.add("fold_working_notes")
        assert "parser: regex dropped" in folded.content[0].text  # type: ignore[union-attr]
        prepared = await use(
            "finalize_handoff",
            **scope,
            draft=draft([sc("c-1")], next_action=[sc("c-1")]),
        )
        committed = await use("commit_handoff", **scope, handoff=prepared)
        assert committed["reference"]["revision"] == 1
        latest = await use("continue_handoff", **scope, selection="latest")
        assert latest["status"] == "resolved"
        hint = await use("prepare_handoff_hint", **scope, selection="latest")
        assert hint["status"] in ("ready", "empty")
        cleared = await use("working_notes_clear", **session_)
        assert cleared["notes"] is None
        hold = await use("set_legal_hold", **session_, reason="review")
        holds = await use("list_legal_holds", **scope)
        assert [h["hold_id"] for h in holds["items"]] == [hold["hold_id"]]
        await use("release_legal_hold", **scope, hold_id=hold["hold_id"], reason="done")
        purged = await use(
            "purge_working_notes", **scope, older_than_seconds=0, dry_run=True
        )
        assert purged["dry_run"] is True
        await use("capture_content_source", **scope, source_id="c-2", content="oops")
        redacted = await use(
            "redact_source",
            **scope,
            source_type="content",
            source_id="c-2",
            reason="pasted by mistake",
        )
        assert redacted["content"] is None
        closed = await use("close_session", **session_)
        assert closed["session_id"] == "sess/1"
        grant = {"scope": scope_id, "role": "viewer"}
        called.add("mint_token")  # its argument 'name' is also use()'s
        result = await mcp.call_tool(
            "mint_token", {"name": "helper", "grants": [grant]}
        )
        assert result.is_error is False, result.content
        minted = result.structured_content
        assert minted is not None
        token_id = minted["token_id"]
        assert (await use("get_token", token_id=token_id))["name"] == "helper"
        tokens = await use("list_tokens", scope_id=scope_id)
        assert token_id in [t["token_id"] for t in tokens["items"]]
        await use("add_token_grant", token_id=token_id, scope="*", role="viewer")
        dated = await use(
            "set_token_expiry", token_id=token_id, expires_at="2030-01-01T00:00:00Z"
        )
        assert dated["expires_at"].startswith("2030-01-01")
        rotated = await use("rotate_token", token_id=token_id, grace_seconds=0)
        assert rotated["token"] != minted["token"]
        await use("remove_token_grant", token_id=rotated["token_id"], scope="*")
        revoked = await use("revoke_token", token_id=rotated["token_id"])
        assert revoked["revoked_at"] is not None
        for name, extra in (
            ("prepare_handoff", {"evidence": [sc("c-1")]}),
            ("activate_handoff", {"boundary_source": refs[0]}),
        ):
            called.add(name)
            error = await failed(mcp, name, **scope, objective="finish", **extra)
            assert error["code"] == "handoff_generation_unavailable"

    session(live.url, live.token, steps)

    assert called == set(REGISTRY)


def test_tool_errors_carry_the_rest_envelope(live: LiveService) -> None:
    async def steps(mcp: ClientSession) -> list[str]:
        scope_id = await _scope(mcp, "errors")
        note = {
            "scope_id": scope_id,
            "source_id": "n-1",
            "content": "one",
            "session_id": "s",
            "note_kind": "validation",
        }
        await ok(mcp, "capture_working_note", **note)
        return [
            (await failed(mcp, "capture_working_note", **{**note, "content": "two"}))[
                "code"
            ],
            (await failed(mcp, "capture_working_note", **{**note, "note_kind": "x"}))[
                "code"
            ],
            (await failed(mcp, "get_scope", scope_id="scp_nope"))["code"],
            (await failed(mcp, "list_scopes", binding_kind="repo"))["code"],
            (await failed(mcp, "no_such_tool"))["code"],
        ]

    codes = session(live.url, live.token, steps)

    assert codes == [
        "source_conflict",
        "invalid_request",
        "scope_not_found",
        "invalid_request",
        "not_found",
    ]


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{", 400, -32700),
        (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', 200, -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "prompts/list"}', 200, -32601),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}',
            200,
            -32602,
        ),
    ],
)
def test_protocol_faults_are_json_rpc_errors(
    live: LiveService, body: bytes, status: int, code: int
) -> None:
    response = httpx.post(f"{live.url}/mcp", content=body, headers=_bearer(live.token))

    assert response.status_code == status
    assert response.json()["error"]["code"] == code


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}


@pytest.mark.parametrize("token", [None, "pct_" + "x" * 43])
def test_without_a_valid_token_the_client_cannot_connect(
    live: LiveService, token: str | None
) -> None:
    async def steps(mcp: ClientSession) -> None:
        raise AssertionError("initialized without a valid token")

    with pytest.raises(MCPError):
        session(live.url, token, steps)
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    response = httpx.post(
        f"{live.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers=headers,
    )
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert response.json()["error"]["code"] == "unauthorized"


def test_a_call_without_the_grant_is_a_forbidden_tool_error(
    live: LiveService,
) -> None:
    scope_id = session(live.url, live.token, lambda mcp: _scope(mcp, "grants"))
    viewer = live.mint(f"{scope_id}:viewer", "mcp-viewer")
    note = {
        "scope_id": scope_id,
        "source_id": "n-1",
        "content": "x",
        "session_id": "s",
        "note_kind": "inspection",
    }

    async def steps(mcp: ClientSession) -> Any:
        refused = await failed(mcp, "capture_working_note", **note)
        scope = await ok(mcp, "get_scope", scope_id=scope_id)
        listed = await ok(mcp, "list_sources", scope_id=scope_id)
        return refused, scope, listed

    refused, scope, listed = session(live.url, viewer, steps)

    assert refused["code"] == "forbidden"
    assert scope["scope_id"] == scope_id
    assert listed["items"] == []
