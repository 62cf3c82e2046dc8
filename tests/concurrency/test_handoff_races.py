"""Handoff commits racing on PostgreSQL: the head lock serialises them per scope."""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.db import connection, connections, transaction

from handoffs.models import HandoffHead, HandoffLineage, HandoffRevision
from tests.concurrency.conftest import race
from tests.conftest import ApiClient, create_scope
from tests.handoffs.helpers import capture, commit, draft, prepared, sc

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def commit_as(token: str, scope_id: str, handoff: dict) -> Any:
    response = commit(ApiClient(token), scope_id, handoff)
    return response.status_code, response.json(), response.get("Idempotent-Replayed")


@pytest.fixture
def scope(api: ApiClient) -> str:
    scope_id = create_scope(api)
    capture(api, scope_id, "c-1")
    return scope_id


def test_16_first_commits_of_different_content_give_one_revision(
    admin_token: str, scope: str
) -> None:
    results = race(
        16,
        lambda i: commit_as(
            admin_token, scope, prepared(scope, draft([sc("c-1")], objective=f"o{i}"))
        ),
    )

    assert Counter(status for status, _, _ in results) == {200: 1, 409: 15}
    winner = next(body for status, body, _ in results if status == 200)
    revision = HandoffRevision.objects.get(scope_id=scope)
    assert revision.revision == winner["reference"]["revision"] == 1
    assert revision.objective == winner["content"]["objective"]
    assert HandoffHead.objects.get(scope_id=scope).current == revision
    assert HandoffLineage.objects.filter(revision=revision).count() == 1


def test_16_identical_commits_give_one_revision_and_one_answer(
    admin_token: str, scope: str
) -> None:
    handoff = prepared(scope, draft([sc("c-1")]))

    results = race(16, lambda i: commit_as(admin_token, scope, handoff))

    assert [status for status, _, _ in results] == [200] * 16
    assert len({str(body) for _, body, _ in results}) == 1
    assert Counter(header for _, _, header in results) == {None: 1, "true": 15}
    assert HandoffRevision.objects.filter(scope_id=scope).count() == 1


def test_commits_on_the_current_base_advance_one_at_a_time(
    admin_token: str, scope: str
) -> None:
    commit_as(admin_token, scope, prepared(scope, draft([sc("c-1")])))

    results = race(
        8,
        lambda i: commit_as(
            admin_token,
            scope,
            prepared(scope, draft([sc("c-1")], objective=f"next {i}"), base=1),
        ),
    )

    assert Counter(status for status, _, _ in results) == {200: 1, 409: 7}
    assert list(
        HandoffRevision.objects.filter(scope_id=scope)
        .order_by("revision")
        .values_list("revision", flat=True)
    ) == [1, 2]


def lock_waiters() -> int:
    """Backends of this database waiting for a lock (read afresh: inside a
    transaction PostgreSQL would keep answering its first snapshot of them)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE wait_event_type = 'Lock' AND datname = current_database()"
        )
        return int(cursor.fetchone()[0])


def test_commits_queued_behind_a_commit_see_the_revision_it_made(
    admin_token: str, scope: str
) -> None:
    """Found by tests/robustness/test_handoff_faults.py: a commit that waited for
    the head lock read the head's new ``current_id`` with the revision row of its
    own snapshot (none), so a stale ``null`` base passed and hit the revision
    number's unique constraint as a 500, and a replay of the winner was a 409.

    The queue is built in order behind a lock this test holds: first the winner
    (base 1), then a stale commit (base null), another base-1 commit, and the
    winner's exact replay; then the lock is let go.
    """
    commit_as(admin_token, scope, prepared(scope, draft([sc("c-1")])))
    winner = prepared(scope, draft([sc("c-1")], objective="winner"), base=1)
    queued = [
        winner,
        prepared(scope, draft([sc("c-1")], objective="stale")),
        prepared(scope, draft([sc("c-1")], objective="also on 1"), base=1),
        winner,
    ]

    def send(handoff: dict) -> Any:
        try:
            return commit_as(admin_token, scope, handoff)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=4) as pool, transaction.atomic():
        HandoffHead.objects.select_for_update().get(scope_id=scope)
        answers = []
        for waiting, handoff in enumerate(queued, start=1):
            answers.append(pool.submit(send, handoff))
            wait_for(lambda n=waiting: lock_waiters() >= n)
    results = [answer.result(timeout=60) for answer in answers]

    assert [
        (status, body.get("reference", body.get("error", {}).get("code")), replayed)
        for status, body, replayed in results
    ] == [
        (200, {"family": "handoff", "artifact_id": "handoff", "revision": 2}, None),
        (409, "revision_conflict", None),
        (409, "revision_conflict", None),
        (200, {"family": "handoff", "artifact_id": "handoff", "revision": 2}, "true"),
    ]
    assert HandoffRevision.objects.filter(scope_id=scope).count() == 2


def wait_for(condition: Any, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"commit never queued ({lock_waiters()})"
        time.sleep(0.02)
