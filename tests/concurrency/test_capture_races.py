"""Capture under real concurrency on PostgreSQL (api.md 5, 5.3).

Threads released by a barrier send HTTP requests through the full stack; each
uses its own database connection, so the races happen in PostgreSQL itself.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from sources.models import CaptureAttempt, ContentSource, SourceJournalHead
from tests.concurrency.conftest import race
from tests.conftest import ApiClient, create_scope

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def capture(token: str, scope_id: str, source_id: str, content: str) -> Any:
    response = ApiClient(token).post(
        "/v1/sources/content",
        {"scope_id": scope_id, "source_id": source_id, "content": content},
    )
    return response.status_code, response.json(), response.get("Idempotent-Replayed")


def test_32_distinct_captures_get_positions_1_to_32(
    api: ApiClient, admin_token: str
) -> None:
    scope_id = create_scope(api)

    results = race(
        32, lambda i: capture(admin_token, scope_id, f"s{i}", f"content {i}")
    )

    assert [status for status, _, _ in results] == [202] * 32
    assert sorted(body["position"] for _, body, _ in results) == list(range(1, 33))
    assert SourceJournalHead.objects.get(scope_id=scope_id).last_position == 32
    assert ContentSource.objects.filter(scope_id=scope_id).count() == 32


def test_32_identical_captures_give_one_row_and_identical_receipts(
    api: ApiClient, admin_token: str
) -> None:
    scope_id = create_scope(api)

    results = race(32, lambda i: capture(admin_token, scope_id, "same", "same content"))

    assert [status for status, _, _ in results] == [202] * 32
    assert len({str(body) for _, body, _ in results}) == 1
    assert Counter(header for _, _, header in results) == {None: 1, "true": 31}
    assert ContentSource.objects.filter(scope_id=scope_id).count() == 1
    assert Counter(
        CaptureAttempt.objects.filter(scope_id=scope_id).values_list(
            "outcome", flat=True
        )
    ) == {"accepted": 1, "replayed": 31}


def test_32_different_contents_for_one_identity_give_one_202_and_31_conflicts(
    api: ApiClient, admin_token: str
) -> None:
    scope_id = create_scope(api)

    results = race(
        32, lambda i: capture(admin_token, scope_id, "contested", f"version {i}")
    )

    statuses = Counter(status for status, _, _ in results)
    assert statuses == {202: 1, 409: 31}
    assert all(
        body["error"]["code"] == "source_conflict" for s, body, _ in results if s == 409
    )
    (row,) = ContentSource.objects.filter(scope_id=scope_id)
    winner = next(body for status, body, _ in results if status == 202)
    assert row.position == winner["position"] == 1
    assert SourceJournalHead.objects.get(scope_id=scope_id).last_position == 1


def test_races_in_8_scopes_at_once_stay_independent(
    api: ApiClient, admin_token: str
) -> None:
    scopes = [create_scope(api, key=f"k{i}") for i in range(8)]

    def work(i: int) -> Any:
        scope_id = scopes[i % 8]
        kind = (
            i // 8
        ) % 4  # per scope: 2 distinct, 1 identical pair member, 1 contested
        if kind < 2:
            return scope_id, capture(admin_token, scope_id, f"distinct{i}", "d")
        if kind == 2:
            return scope_id, capture(admin_token, scope_id, "same", "same")
        return scope_id, capture(admin_token, scope_id, "contested", f"v{i}")

    results = race(32, work)

    assert all(status in (202, 409) for _, (status, _, _) in results)
    for scope_id in scopes:
        positions = sorted(
            ContentSource.objects.filter(scope_id=scope_id).values_list(
                "position", flat=True
            )
        )
        assert positions == [1, 2, 3, 4]
        assert SourceJournalHead.objects.get(scope_id=scope_id).last_position == 4
