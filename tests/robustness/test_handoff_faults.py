"""Handoff commits and continues while the database restarts (handoff.md, commit).

Eight committers read the latest revision and commit the next one citing it (and
a Source); after an unanswered or 503 commit they send the same commit again.
Eight readers continue the latest revision. Meanwhile the throwaway cluster is
stopped (``-m fast`` or ``-m immediate``) and started again. Afterwards:

- the revisions are 1..N, each committed once (no content twice), each one some
  committer sent, and each cites the one before it (lineage unbroken), with a
  lineage row pinning its Source;
- every acknowledged commit is the revision it was answered with, holding exactly
  the content that was sent; every continue answered 200 showed the content that
  revision holds now;
- during the outage answers are 503 ``unavailable`` (never 500), and commits and
  continues succeed again after it without a restart.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.handoffs.helpers import CONTINUE, draft, hc, prepared, sc
from tests.robustness.conftest import Service, capture, scope_create
from tests.robustness.faults import Sent, fault_stream, restart_database, rows
from tests.robustness.processes import PostgresCluster

pytestmark = pytest.mark.postgres

COMMIT = "/v1/handoff/commit"
COMMITTERS = 8


def handoff_body(thread: int, index: int, base: int | None) -> dict[str, Any]:
    built_on = [] if base is None else [[hc(base)]]
    return draft([sc("fact")], *built_on, objective=f"committer {thread} try {index}")


def handoff_writer(scope_id: str) -> Any:
    """Committers alternate reading the latest revision and committing the next;
    an unanswered or refused commit is sent again as it was. Readers continue."""
    latest = {"scope_id": scope_id, "selection": "latest"}

    def write(_: httpx.Client, thread: int, index: int, previous: Sent | None) -> Any:
        if thread >= COMMITTERS or previous is None:
            return "POST", CONTINUE, latest, {}
        if previous.path == COMMIT:
            if previous.status in (None, 503):
                return "POST", COMMIT, previous.body, {}
            return "POST", CONTINUE, latest, {}
        if previous.status != 200:
            return "POST", CONTINUE, latest, {}
        current = previous.answer["current_revision"]
        base = None if current is None else current["revision"]
        handoff = prepared(scope_id, handoff_body(thread, index, base), base)
        return "POST", COMMIT, {"scope_id": scope_id, "handoff": handoff}, {}

    return write


def revision_contents(client: httpx.Client, scope_id: str) -> dict[int, Any]:
    """Every revision's content, read with ``continue`` ``exact``; each resolves."""
    latest = client.post(CONTINUE, json={"scope_id": scope_id, "selection": "latest"})
    contents: dict[int, Any] = {}
    for number in range(1, latest.json()["current_revision"]["revision"] + 1):
        revision = {"family": "handoff", "artifact_id": "handoff", "revision": number}
        answer = client.post(
            CONTINUE,
            json={"scope_id": scope_id, "selection": "exact", "revision": revision},
        ).json()
        assert {check["status"] for check in answer["evidence_checks"]} == {"available"}
        contents[number] = answer["content"]
    return contents


def assert_lineage(contents: dict[int, Any], database_url: str, scope_id: str) -> None:
    stored = rows(
        database_url,
        "SELECT r.revision, count(l.id) FROM handoffs_handoffrevision r"
        " LEFT JOIN handoffs_handofflineage l ON l.revision_id = r.id"
        " WHERE r.scope_id = %s GROUP BY r.revision ORDER BY r.revision",
        scope_id,
    )
    assert stored == [(number, 1) for number in contents]
    for number, content in contents.items():
        cited = [c for s in content["state"] for c in s["citations"]]
        expected = [sc("fact")] + ([hc(number - 1)] if number > 1 else [])
        assert cited == expected, number
    objectives = [content["objective"] for content in contents.values()]
    assert len(set(objectives)) == len(objectives), "a content committed twice"


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_handoff_commits_and_continues_survive_a_database_restart(
    fault_service: Service, fault_cluster: PostgresCluster, mode: str
) -> None:
    with fault_service.client() as client:
        scope_id = scope_create(client, key=f"handoff-{mode}")
        assert capture(client, scope_id, "fact", "a cited fact").status_code == 202

    result = fault_stream(
        fault_service,
        handoff_writer(scope_id),
        fault=restart_database(fault_cluster, mode),
        before=64,
        after=96,
    )
    print(result.summary())

    with fault_service.client() as client:
        contents = revision_contents(client, scope_id)
    commits = [s for s in result.sent if s.path == COMMIT]
    reads = [s for s in result.sent if s.path == CONTINUE]
    assert {s.status for s in commits} <= {200, 409, 503}
    assert {s.status for s in reads} <= {200, 503}
    refused = [s for s in result.sent if s.status == 503]
    assert refused, "nothing met the outage"
    assert {s.answer["error"]["code"] for s in refused} == {"unavailable"}
    assert {s.answer["error"]["code"] for s in commits if s.status == 409} <= {
        "revision_conflict"
    }
    assert_lineage(contents, fault_cluster.url, scope_id)
    sent = {s.body["handoff"]["content"]["objective"] for s in commits}
    assert {content["objective"] for content in contents.values()} <= sent
    for ack in (s for s in commits if s.status == 200):
        number = ack.answer["reference"]["revision"]
        assert (
            contents[number] == ack.body["handoff"]["content"] == ack.answer["content"]
        )
    for read in (s for s in reads if s.status == 200 and s.answer["content"]):
        assert (
            contents[read.answer["selected_revision"]["revision"]]
            == read.answer["content"]
        )
    # Recovered without a restart: each thread's last request, sent after the
    # outage, was served (a committer that lost its race gets 409, never 503).
    assert {s.status for s in result.last_ones_after_fault()} <= {200, 409}
    after = [s for s in result.after_fault() if s.status == 200]
    assert any(s.path == COMMIT for s in after), "no commit after the outage"
