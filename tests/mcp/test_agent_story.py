"""An agent's session told through MCP only, with the official client.

The agent opens a scope, captures what it read and a note on what it gave up,
keeps its working notes in the session, and hands off: a draft citing both
Sources is finalized, committed (twice: the same revision) and continued by the
next agent, who finds both citations available.
"""

from __future__ import annotations

from typing import Any

from mcp.client.session import ClientSession

from tests.handoffs.helpers import draft, sc
from tests.mcp.client import ok, session
from tests.mcp.conftest import LiveService

DESIGN = "design/parser.md"
NOTE = "note/regex-tokenizer"
SESSION = "agent-7/turn-3"
NOTES = "Parser: recursive descent chosen; the regex tokenizer is dropped."


async def _first_agent(mcp: ClientSession) -> dict[str, Any]:
    scope = await ok(
        mcp,
        "create_scope",
        title="Parser rewrite",
        summary="Replace the parser",
        idempotency_key="story",
    )
    where = {"scope_id": scope["scope_id"]}
    await ok(
        mcp,
        "capture_content_source",
        **where,
        source_id=DESIGN,
        content="The parser is recursive descent over the token stream.",
    )
    await ok(
        mcp,
        "capture_working_note",
        **where,
        source_id=NOTE,
        content="A regex tokenizer failed on nested quotes.",
        session_id=SESSION,
        note_kind="abandoned_approach",
    )
    notes = await ok(
        mcp,
        "working_notes_update",
        **where,
        session_id=SESSION,
        notes=NOTES,
        capture={"note_kind": "validation"},
    )
    body = draft([sc(DESIGN)], [sc(NOTE)], next_action=[sc(DESIGN)])
    prepared = await ok(mcp, "finalize_handoff", **where, draft=body)
    committed = await ok(mcp, "commit_handoff", **where, handoff=prepared)
    again = await ok(mcp, "commit_handoff", **where, handoff=prepared)
    return {"where": where, "notes": notes, "committed": committed, "again": again}


def test_an_agent_hands_off_through_mcp_only(live: LiveService) -> None:
    first = session(live.url, live.token, _first_agent)
    where = first["where"]

    async def next_agent(mcp: ClientSession) -> tuple[Any, Any]:
        revision = first["committed"]["reference"]
        continued = await ok(
            mcp, "continue_handoff", **where, selection="exact", revision=revision
        )
        notes = await ok(mcp, "working_notes_get", **where, session_id=SESSION)
        return continued, notes

    continued, notes = session(live.url, live.token, next_agent)

    committed = first["committed"]
    assert first["again"] == committed
    assert {ref["source_id"] for ref in committed["source_refs"]} == {DESIGN, NOTE}
    assert continued["status"] == "resolved"
    assert continued["content"] == committed["content"]
    assert [c["status"] for c in continued["evidence_checks"]] == ["available"] * 3
    assert notes["notes"] == NOTES
    assert first["notes"]["source"]["source"]["source_id"].startswith(
        f"session-notes:{SESSION}"
    )
