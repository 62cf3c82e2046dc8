"""Envelope writes from 16 clients while the database restarts or a worker dies.

The service runs under granian with production settings against a throwaway
PostgreSQL 15 cluster. Sixteen clients write four session envelopes - the host's
PUT, the worker's PATCH and working notes captured as Sources - while the cluster
is stopped (``-m fast`` or ``-m immediate``) and started again, or while one
granian worker is killed with ``kill -9``. Afterwards, read from the rows:

- no acknowledged write is lost: its version's revision holds exactly the meta
  the client was answered, and each thread's versions grow;
- no version is repeated or skipped: revisions are 1..N and the envelope is N,
  with revision N's meta;
- every revision is a write some client sent (none invented, none applied twice),
  and every notes revision has its Source (both stored or neither);
- during the outage a write is answered 503 ``unavailable`` (never 500), and the
  service recovers without a restart.
"""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import httpx
import pytest

from tests.reliability.model import typed
from tests.robustness.conftest import (
    Service,
    all_sources,
    scope_create,
)
from tests.robustness.faults import (
    Sent,
    StreamResult,
    fault_stream,
    restart_database,
    rows,
)
from tests.robustness.processes import PostgresCluster, wait_until

pytestmark = pytest.mark.postgres

RECOVERY_BOUND = 8.0  # seconds from the database's return to the first acknowledgement
SESSIONS = 4


def envelope_writer(scope_id: str) -> Any:
    """Thread ``t`` writes session ``t % 4``: PUT, PATCH, notes, each value unique."""

    def write(client: httpx.Client, thread: int, index: int, _: Any) -> tuple[Any, ...]:
        base = f"/v1/scopes/{scope_id}/sessions/sess-{thread % SESSIONS}"
        mark = thread * 100_000 + index
        return [
            ("PUT", f"{base}/envelope", {"meta": {"x-writer": thread, "x-seq": mark}}),
            ("PATCH", f"{base}/envelope", {"meta": {"turnCursor": mark}}),
            ("PUT", f"{base}/working-notes", {"notes": f"note {mark}", "capture": {}}),
        ][index % 3] + ({},)

    return write


def revisions(database_url: str, scope_id: str) -> dict[str, dict[int, Any]]:
    """``{session_id: {version: (operation, meta)}}`` from the revision rows."""
    values = {
        (envelope, digest): value
        for envelope, digest, value in rows(
            database_url,
            "SELECT v.envelope_id, v.digest, v.value FROM sessions_app_envelopevalue v"
            " JOIN sessions_app_sessionenvelope e ON e.id = v.envelope_id"
            " WHERE e.scope_id = %s",
            scope_id,
        )
    }
    found: dict[str, dict[int, Any]] = {}
    for session, envelope, version, operation, inline, digests in rows(
        database_url,
        "SELECT e.session_id, e.id, r.version, r.operation, r.inline_values,"
        " r.value_digests FROM sessions_app_enveloperevision r"
        " JOIN sessions_app_sessionenvelope e ON e.id = r.envelope_id"
        " WHERE e.scope_id = %s",
        scope_id,
    ):
        meta = {**inline, **{k: values[envelope, d] for k, d in digests.items()}}
        found.setdefault(session, {})[version] = (operation, meta)
    return found


def session_of(sent: Sent) -> str:
    return sent.path.split("/sessions/")[1].split("/")[0]


def mark_of(operation: str, meta: dict[str, Any]) -> Any:
    """The unique value a write of ``operation`` left in ``meta``."""
    key = {"replace": "x-seq", "overlay": "turnCursor", "notes_put": "workingNotes"}
    return meta[key[operation]]


def sent_mark(sent: Sent) -> tuple[str, Any]:
    meta = sent.body.get("meta", {})
    if sent.path.endswith("working-notes"):
        return "notes_put", sent.body["notes"]
    if sent.method == "PUT":
        return "replace", meta["x-seq"]
    return "overlay", meta["turnCursor"]


def assert_consistent(
    service: Service, database_url: str, scope_id: str, result: StreamResult
) -> None:
    found = revisions(database_url, scope_id)
    acks = [s for s in result.sent if s.acknowledged]
    with service.client() as client:
        for session, by_version in found.items():
            final = client.get(f"/v1/scopes/{scope_id}/sessions/{session}/envelope")
            assert sorted(by_version) == list(range(1, final.json()["version"] + 1))
            assert typed(final.json()["meta"]) == typed(by_version[max(by_version)][1])
        stored = {s["source_id"]: s for s in all_sources(client, scope_id)}

    versions = Counter((session_of(s), s.answer["version"]) for s in acks)
    assert versions.most_common(1)[0][1] == 1, "a version was answered twice"
    for ack in acks:
        operation, meta = found[session_of(ack)][ack.answer["version"]]
        assert (operation, mark_of(operation, meta)) == sent_mark(ack), ack
        if "meta" in ack.answer:
            assert typed(ack.answer["meta"]) == typed(meta), ack
        else:
            source_id = f"session-notes:{session_of(ack)}:v{ack.answer['version']}"
            receipt = ack.answer["source"]
            assert receipt["source"]["source_id"] == source_id, ack
            assert receipt["position"] == stored[source_id]["position"], ack
    for thread in {s.thread for s in acks}:
        mine = [s.answer["version"] for s in acks if s.thread == thread]
        assert mine == sorted(set(mine)), f"thread {thread} saw a version go back"

    marks = Counter(sent_mark(s) for s in result.sent)
    applied = Counter(
        (operation, mark_of(operation, meta))
        for by_version in found.values()
        for operation, meta in by_version.values()
    )
    assert applied.keys() <= marks.keys(), "a revision no client sent"
    assert max(applied.values()) == 1, "a write was applied twice"
    notes = {
        f"session-notes:{session}:v{version}": meta["workingNotes"]
        for session, by_version in found.items()
        for version, (operation, meta) in by_version.items()
        if operation == "notes_put"
    }
    assert {k: v["content"] for k, v in stored.items()} == notes
    assert sorted(s["position"] for s in stored.values()) == list(
        range(1, len(stored) + 1)
    )


def assert_recovered(result: StreamResult, threads: int = 16) -> None:
    """Writes were acknowledged again soon after the fault ended, and every
    thread's last write sent after it was."""
    after = [s for s in result.after_fault() if s.acknowledged]
    recovery = after[0].at - result.fault_ended
    print(f"{result.summary()}; first acknowledgement {recovery:.2f}s after it")
    assert len(result.last_of_each_thread()) == threads
    assert all(s.acknowledged for s in result.last_ones_after_fault()), (
        "each thread's last write, sent after the fault, was acknowledged"
    )
    assert recovery < RECOVERY_BOUND


@pytest.mark.parametrize("mode", ["fast", "immediate"])
def test_envelope_writes_survive_a_database_restart(
    fault_service: Service, fault_cluster: PostgresCluster, mode: str
) -> None:
    with fault_service.client() as client:
        scope_id = scope_create(client, key=f"envelope-{mode}")

    result = fault_stream(
        fault_service,
        envelope_writer(scope_id),
        fault=restart_database(fault_cluster, mode),
        before=64,
        after=96,
    )

    assert result.statuses() <= {200, 201, 503}, result.statuses()
    refused = [s for s in result.sent if s.status == 503]
    assert refused, "no write met the outage"
    assert {s.answer["error"]["code"] for s in refused} == {"unavailable"}
    assert_recovered(result)
    assert_consistent(fault_service, fault_cluster.url, scope_id, result)


def test_envelope_writes_survive_kill_9_of_a_worker(
    fault_service: Service, fault_cluster: PostgresCluster
) -> None:
    with fault_service.client() as client:
        scope_id = scope_create(client, key="envelope-kill-worker")
    workers = fault_service.server.worker_pids()
    killed: list[int] = []

    def kill_a_worker() -> None:
        killed.append(fault_service.server.kill_worker())
        wait_until(
            lambda: len(set(fault_service.server.worker_pids()) - set(workers)) == 1,
            timeout=30,
            what="granian to replace the killed worker",
        )
        time.sleep(0.5)

    result = fault_stream(
        fault_service,
        envelope_writer(scope_id),
        fault=kill_a_worker,
        before=64,
        after=96,
    )

    assert killed[0] in workers
    assert result.statuses() <= {200, 201, None}, result.statuses()
    assert_recovered(result)
    assert_consistent(fault_service, fault_cluster.url, scope_id, result)
