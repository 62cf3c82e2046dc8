"""The issue's acceptance story: one note, cited while active, then expired."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from handoffs.models import HandoffLineage, HandoffRevision
from tests.conftest import ApiClient, error_of
from tests.handoffs.helpers import (
    CONTINUE,
    HINT,
    capture,
    commit,
    draft,
    finalize,
    note,
    prepared,
    resolve_url,
    sc,
    select,
)

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
EXPIRES = NOW + timedelta(minutes=10)


def test_a_note_resolves_while_active_and_is_unavailable_everywhere_after(
    api: ApiClient, scope_id: str
) -> None:
    body = draft([sc("c-1")], [sc("wn-1")])
    refs = {"purpose": "handoff", "refs": [{"name": "content", "source_id": "wn-1"}]}
    with time_machine.travel(NOW, tick=False) as clock:
        capture(api, scope_id, "c-1")
        note(api, scope_id, "wn-1", content="parser inspected", expires_at=EXPIRES)
        active = {
            "resolve": api.post(resolve_url(scope_id), refs),
            "finalize": finalize(api, scope_id, body),
            "commit": commit(api, scope_id, prepared(scope_id, body)),
            "continue": select(api, CONTINUE, scope_id, "latest"),
            "hint": select(api, HINT, scope_id, "latest"),
        }
        clock.move_to(EXPIRES)
        expired = {
            "resolve": api.post(resolve_url(scope_id), refs),
            "finalize": finalize(api, scope_id, body),
            "commit": commit(
                api, scope_id, prepared(scope_id, {**body, "objective": "New"}, base=1)
            ),
            "continue": select(api, CONTINUE, scope_id, "latest"),
            "hint": select(api, HINT, scope_id, "latest"),
        }

    assert {name: r.status_code for name, r in active.items()} == dict.fromkeys(
        active, 200
    )
    assert active["resolve"].json()["items"][0]["source"]["content"] == (
        "parser inspected"
    )
    assert [c["status"] for c in active["continue"].json()["evidence_checks"]] == [
        "available",
        "available",
    ]
    assert active["hint"].json()["status"] == "ready"

    (item,) = expired["resolve"].json()["items"]
    assert (item["status"], item["reason"], item["source"]) == (
        "unavailable",
        "expired",
        None,
    )
    assert (expired["finalize"].status_code, expired["commit"].status_code) == (
        404,
        404,
    )
    assert error_of(expired["finalize"])["code"] == "handoff_evidence_not_found"
    assert error_of(expired["commit"])["code"] == "handoff_evidence_not_found"
    assert expired["continue"].json()["evidence_checks"][1] == {
        "claim": "state",
        "state_index": 1,
        "status": "unavailable",
        "unavailable_evidence": [sc("wn-1")],
    }
    assert expired["hint"].json() == {
        "schema": "powercontext.prepared-context.v1",
        "status": "empty",
        "content": None,
        "content_bytes": 0,
    }
    assert HandoffRevision.objects.count() == 1
    assert sorted(
        HandoffLineage.objects.values_list("source__source_id", flat=True)
    ) == ["c-1", "wn-1"]
