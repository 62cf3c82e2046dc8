"""The reference client against our handoff operations (handoff.md 2).

Each test drives ``finalize_handoff``, ``commit_handoff``, ``continue_handoff`` and
``prepare_handoff_hint`` through the unmodified client, which rejects any response
that does not match its strict models (extra keys, missing keys, other statuses).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.compat,
    pytest.mark.django_db(transaction=True),
]

SCOPE = {
    "op": "create_scope",
    "request": {"title": "T", "summary": "S", "idempotency_key": "handoff"},
}


def sc(source_id: str) -> dict[str, Any]:
    return {"kind": "source", "source_ref": {"name": "content", "source_id": source_id}}


def capture(source_id: str) -> dict[str, Any]:
    return {
        "op": "capture_content_source",
        "request": {"scope_id": "$0.scope_id", "source_id": source_id, "content": "x"},
    }


def note(source_id: str, expires_at: datetime) -> dict[str, Any]:
    return {
        "op": "capture_working_note",
        "request": {
            "scope_id": "$0.scope_id",
            "source_id": source_id,
            "content": "inspected",
            "session_id": "sess",
            "note_kind": "inspection",
            "expires_at": expires_at.isoformat(),
        },
    }


def draft(*state: list[dict], next_action: list[dict] | None = None) -> dict:
    return {
        "objective": "Finish the parser",
        "state": [{"text": f"state {i}", "citations": c} for i, c in enumerate(state)],
        "disposition": "continuable",
        "next_action": None
        if next_action is None
        else {"text": "do this next", "citations": next_action},
        "omissions": [{"text": "lexer untouched", "citation": None}],
    }


def finalize(scope: str, body: dict) -> dict[str, Any]:
    return {"op": "finalize_handoff", "request": {"scope_id": scope, "draft": body}}


def prepared_from(step: int) -> dict[str, Any]:
    """The PreparedHandoff step ``step`` returned, as the client parsed it."""
    return {
        key: f"${step}.{key}"
        for key in ("generation", "schema", "scope_id", "base", "content")
    }


def commit(scope: str, step: int) -> dict[str, Any]:
    return {
        "op": "commit_handoff",
        "request": {"scope_id": scope, "handoff": prepared_from(step)},
    }


def selecting(op: str, scope: str, selection: str, **fields: Any) -> dict[str, Any]:
    return {"op": op, "request": {"scope_id": scope, "selection": selection, **fields}}


def failure(result: dict) -> tuple[int, str]:
    return result["error"]["status_code"], result["error"]["code"]


def test_client_finalizes_commits_continues_and_hints(
    reference_client: Callable, make_token: Callable[..., str]
) -> None:
    expires = datetime.now(UTC) + timedelta(days=1)
    ref = {"family": "handoff", "artifact_id": "handoff", "revision": 1}
    results = reference_client(
        make_token("*:admin"),
        [
            SCOPE,  # 0
            capture("c-1"),  # 1
            note("wn-1", expires),  # 2
            finalize(
                "$0.scope_id", draft([sc("c-1"), sc("wn-1")], next_action=[sc("wn-1")])
            ),
            commit("$0.scope_id", 3),  # 4
            commit("$0.scope_id", 3),  # 5: idempotent
            selecting("continue_handoff", "$0.scope_id", "latest"),  # 6
            selecting("continue_handoff", "$0.scope_id", "exact", revision=ref),  # 7
            selecting(
                "continue_handoff", "$0.scope_id", "prepared", prepared=prepared_from(3)
            ),  # 8
            selecting("prepare_handoff_hint", "$0.scope_id", "latest", max_bytes=4000),
            selecting("prepare_handoff_hint", "$0.scope_id", "latest", max_bytes=1),
            finalize("$0.scope_id", draft([sc("c-1")])),  # 11: base is revision 1
            {
                "op": "prepare_handoff",
                "request": {
                    "scope_id": "$0.scope_id",
                    "objective": "o",
                    "evidence": [sc("c-1")],
                },
            },  # 12
            finalize("$0.scope_id", draft([sc("never-captured")])),  # 13
        ],
    )

    assert all("ok" in result for result in results[:12]), results
    scope = results[0]["ok"]["scope_id"]
    assert results[3]["ok"]["base"] is None
    assert results[3]["ok"]["scope_id"] == scope
    assert results[4]["ok"] == results[5]["ok"]
    assert results[4]["ok"]["reference"] == ref
    assert results[4]["ok"]["content"] == results[3]["ok"]["content"]
    assert results[4]["ok"]["source_refs"] == [
        {"name": "content", "source_id": "c-1"},
        {"name": "content", "source_id": "wn-1"},
    ]
    assert results[4]["ok"]["artifact_refs"] == []
    assert [results[i]["ok"]["selection"] for i in (6, 7, 8)] == [
        "latest",
        "exact",
        "prepared",
    ]
    assert [results[i]["ok"]["selected_revision"] for i in (6, 7, 8)] == [
        ref,
        ref,
        None,
    ]
    assert [c["status"] for c in results[6]["ok"]["evidence_checks"]] == [
        "available",
        "available",
    ]
    assert results[9]["ok"]["status"] == "ready"
    assert results[9]["ok"]["content_bytes"] == len(
        results[9]["ok"]["content"].encode("utf-8")
    )
    assert results[10]["ok"]["status"] == "empty"
    assert results[10]["ok"]["content"] is None
    assert results[11]["ok"]["base"] == ref
    assert failure(results[12]) == (503, "handoff_generation_unavailable")
    assert failure(results[13]) == (404, "handoff_evidence_not_found")


def test_client_sees_a_stale_base_and_an_empty_history(
    reference_client: Callable, make_token: Callable[..., str]
) -> None:
    results = reference_client(
        make_token("*:admin"),
        [
            SCOPE,
            capture("c-1"),
            selecting("continue_handoff", "$0.scope_id", "latest"),  # 2
            selecting("prepare_handoff_hint", "$0.scope_id", "latest"),  # 3
            finalize("$0.scope_id", draft([sc("c-1")])),  # 4
            commit("$0.scope_id", 4),  # 5
            finalize(
                "$0.scope_id", {**draft([sc("c-1")]), "objective": "Another"}
            ),  # 6: finalized against revision 1
            {
                "op": "commit_handoff",
                "request": {
                    "scope_id": "$0.scope_id",
                    "handoff": {**prepared_from(6), "base": None},
                },
            },  # 7: stale base
        ],
    )

    assert results[2]["ok"] == {
        "trust": "untrusted_history",
        "status": "empty",
        "scope_id": results[0]["ok"]["scope_id"],
        "content": None,
        "selection": None,
        "selected_revision": None,
        "current_revision": None,
        "evidence_checks": [],
    }
    assert results[3]["ok"]["status"] == "empty"
    assert results[5]["ok"]["reference"]["revision"] == 1
    assert failure(results[7]) == (409, "revision_conflict")


def test_client_sees_evidence_expire(
    reference_client: Callable, make_token: Callable[..., str]
) -> None:
    token = make_token("*:admin")
    # Long enough for the setup below to finish before the note expires on a busy
    # machine; the test then waits for the expiry.
    expires = datetime.now(UTC) + timedelta(seconds=8)
    body = draft([sc("c-1")], [sc("wn-exp")], next_action=[sc("wn-exp"), sc("c-1")])
    setup = reference_client(
        token,
        [
            SCOPE,
            capture("c-1"),
            note("wn-exp", expires),
            finalize("$0.scope_id", body),  # 3: cited while active
            commit("$0.scope_id", 3),  # 4
            selecting("prepare_handoff_hint", "$0.scope_id", "latest", max_bytes=4000),
        ],
    )
    assert all("ok" in result for result in setup), setup
    assert setup[5]["ok"]["status"] == "ready"
    scope = setup[0]["ok"]["scope_id"]

    time.sleep(max(0.0, (expires - datetime.now(UTC)).total_seconds()) + 0.5)
    after = reference_client(
        token,
        [
            selecting("continue_handoff", scope, "latest"),  # 0
            selecting("prepare_handoff_hint", scope, "latest", max_bytes=4000),  # 1
            finalize(scope, body),  # 2
            {
                "op": "commit_handoff",
                "request": {"scope_id": scope, "handoff": setup[3]["ok"]},
            },  # 3: equal to the head: idempotent despite the expiry
        ],
    )

    note_citation = sc("wn-exp")
    assert after[0]["ok"]["status"] == "resolved"
    assert after[0]["ok"]["evidence_checks"] == [
        {
            "claim": "state",
            "state_index": 0,
            "status": "available",
            "unavailable_evidence": [],
        },
        {
            "claim": "state",
            "state_index": 1,
            "status": "unavailable",
            "unavailable_evidence": [note_citation],
        },
        {
            "claim": "next_action",
            "state_index": None,
            "status": "unavailable",
            "unavailable_evidence": [note_citation],
        },
    ]
    assert after[1]["ok"] == {
        "schema": "powercontext.prepared-context.v1",
        "status": "empty",
        "content": None,
        "content_bytes": 0,
        "reason": None,
    }
    assert failure(after[2]) == (404, "handoff_evidence_not_found")
    assert after[3]["ok"] == setup[4]["ok"]
