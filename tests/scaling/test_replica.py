"""Reads from a real streaming replica (docs/operations.md, "Read replicas").

A private primary and a ``pg_basebackup`` hot standby on loopback; our service
under granian with ``DATABASE_REPLICA_URL``. Pausing the standby's replay makes
it fall behind on purpose, so each test can tell which database answered: lists,
audit and the window come from the replica, while captures, replay checks,
single-Source reads and envelopes (``ETag`` then ``If-Match``) read the primary,
so a client always reads its own writes there.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.robustness.conftest import (
    Service,
    all_sources,
    capture,
    production_env,
    scope_create,
    source_get,
)
from tests.robustness.processes import (
    LaunchedServer,
    PostgresCluster,
    database_create,
    database_url_for,
    mint_token,
    wait_until,
)
from tests.scaling.clusters import ReplicaCluster

pytestmark = pytest.mark.postgres

DATABASE = "pc_replica"


@dataclass
class Deployment:
    primary: PostgresCluster
    replica: ReplicaCluster
    patient: Service  # tolerates 10 minutes of lag: reads stay on the replica
    strict: Service  # tolerates 1 second: a lagging replica is skipped
    scope_id: str


@pytest.fixture(scope="module")
def deployment(
    tmp_path_factory: pytest.TempPathFactory, static_root: Path
) -> Iterator[Deployment]:
    with contextlib.ExitStack() as stack:
        primary = PostgresCluster()
        stack.callback(primary.destroy)
        primary.init()
        primary.start()
        primary_url = database_create(primary.url, DATABASE)
        env = production_env(primary_url, static_root)  # migrated on the primary
        replica = ReplicaCluster(primary)
        stack.callback(replica.destroy)
        replica.init()
        replica.start()
        shared = {
            "DATABASE_REPLICA_URL": database_url_for(replica.url, DATABASE),
            "DJANGO_SECRET_KEY": env["DJANGO_SECRET_KEY"],  # cursors work on both
        }
        logs = tmp_path_factory.mktemp("replica-logs")
        services = []
        for max_lag in ("600", "1"):
            server = LaunchedServer(
                {**env, **shared, "POWERCONTEXT_REPLICA_MAX_LAG": max_lag},
                logs,
                workers=1,
                threads=4,
            )
            stack.callback(server.stop)
            server.start()
            services.append(Service(server, mint_token(env)))
        patient, strict = services
        with patient.client() as client:
            scope_id = scope_create(client, key="replica")
            assert capture(client, scope_id, "c-0", "before").status_code == 202
        wait_until(
            lambda: ids(patient, scope_id) == ["c-0"], timeout=30, what="replication"
        )
        yield Deployment(primary, replica, patient, strict, scope_id)


def ids(service: Service, scope_id: str) -> list[str]:
    with service.client() as client:
        return [item["source_id"] for item in all_sources(client, scope_id)]


def listed(client: httpx.Client, path: str, **params: Any) -> list[str]:
    response = client.get(path, params=params)
    assert response.status_code == 200, response.text
    body = response.json()
    return [item["source_id"] for item in body["items"]]


def test_lists_read_the_replica_and_a_client_reads_its_own_writes(
    deployment: Deployment,
) -> None:
    scope_id = deployment.scope_id
    envelope = f"/v1/scopes/{scope_id}/sessions/s-1/envelope"
    with (
        deployment.replica.replay_paused(DATABASE),
        deployment.patient.client() as client,
    ):
        accepted = capture(client, scope_id, "c-1", "while behind")
        replayed = capture(client, scope_id, "c-1", "while behind")
        conflict = capture(client, scope_id, "c-1", "another value")
        fetched = source_get(client, scope_id, "c-1")
        created = client.put(envelope, json={"meta": {"x-step": 1}})
        read = client.get(envelope)
        patched = client.put(
            envelope,
            json={"meta": {"x-step": 2}},
            headers={"If-Match": read.headers["ETag"]},
        )
        sources = listed(client, f"/v1/scopes/{scope_id}/sources")
        audit = listed(client, f"/v1/scopes/{scope_id}/source-audit")
        window = listed(client, f"/v1/scopes/{scope_id}/sources/window", after=0)
        attempts = client.get(
            f"/v1/scopes/{scope_id}/source-audit/content/c-1/attempts"
        )

    # The primary: the capture, its replay check, the Source, the envelope.
    assert accepted.status_code == 202, accepted.text
    assert replayed.status_code == 202
    assert replayed.headers.get("Idempotent-Replayed") == "true"
    assert replayed.json() == accepted.json()
    assert conflict.status_code == 409
    assert fetched.status_code == 200
    assert fetched.json()["content"] == "while behind"
    assert created.status_code == 201
    assert read.headers["ETag"] == created.headers["ETag"]
    assert patched.status_code == 200, patched.text
    # The replica, paused before the capture: none of it yet.
    assert sources == audit == window == ["c-0"]
    assert attempts.status_code == 404  # not on the replica yet
    # Replay resumed: the lists catch up.
    wait_until(
        lambda: ids(deployment.patient, scope_id) == ["c-0", "c-1"],
        timeout=30,
        what="the replica to replay the capture",
    )


def test_a_replica_lagging_past_the_limit_is_skipped(deployment: Deployment) -> None:
    scope_id = deployment.scope_id
    with deployment.replica.replay_paused(DATABASE):
        with deployment.strict.client() as client:
            assert capture(client, scope_id, "c-2", "lagging").status_code == 202
        time.sleep(2.5)  # past POWERCONTEXT_REPLICA_MAX_LAG=1 and the probe interval
        through_strict = ids(deployment.strict, scope_id)
        through_patient = ids(deployment.patient, scope_id)

    assert "c-2" in through_strict  # the primary answered
    assert "c-2" not in through_patient  # the replica answered


def test_a_walk_begun_on_the_primary_is_completed_not_cut_short(
    deployment: Deployment,
) -> None:
    """A cursor fixes the high watermark of its first page; a later page read
    where the replica has not replayed that far is read from the primary."""
    scope_id = deployment.scope_id
    with deployment.replica.replay_paused(DATABASE):
        with deployment.strict.client() as client:
            for number in range(3):
                capture(client, scope_id, f"w-{number}", "walk")
        time.sleep(2.5)
        with deployment.strict.client() as client:  # lagging: the primary
            first = client.get(f"/v1/scopes/{scope_id}/sources", params={"limit": 1})
        walked = [item["source_id"] for item in first.json()["items"]]
        cursor = first.json()["next_cursor"]
        with deployment.patient.client() as client:  # the replica, but behind
            while cursor is not None:
                page = client.get(
                    f"/v1/scopes/{scope_id}/sources",
                    params={"limit": 1, "cursor": cursor},
                ).json()
                walked += [item["source_id"] for item in page["items"]]
                cursor = page["next_cursor"]

    assert walked[-3:] == ["w-0", "w-1", "w-2"]
    assert len(walked) == len(set(walked))


def test_a_stopped_replica_sends_reads_to_the_primary(deployment: Deployment) -> None:
    scope_id = deployment.scope_id
    deployment.replica.stop()
    try:
        with deployment.patient.client() as client:
            capture(client, scope_id, "c-3", "replica down")
            statuses = []
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                response = client.get(f"/v1/scopes/{scope_id}/sources")
                statuses.append(response.status_code)
                if response.status_code == 200 and "c-3" in response.text:
                    break
                time.sleep(0.2)
    finally:
        deployment.replica.start()

    assert statuses[-1] == 200, statuses
    assert set(statuses) <= {200, 503}, statuses
    # Back: the replica serves again once it has caught up.
    wait_until(
        lambda: "c-3" in ids(deployment.patient, scope_id),
        timeout=30,
        what="the restarted replica",
    )
