"""Handoff commits racing on PostgreSQL: the head lock serialises them per scope."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

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
