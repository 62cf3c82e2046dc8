"""Purge running concurrently with captures and exact replays of the same
identities, and two purges at once (cron on two servers), on PostgreSQL: nothing
is lost, nothing is tombstoned twice, no 5xx."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from lifecycle.services import purge_run
from powercontext.principals import Principal
from sources.models import ContentSource
from tests.concurrency.conftest import race
from tests.conftest import ApiClient, create_scope
from tests.lifecycle.helpers import note_body

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

NOTES = 120
PURGERS = 2
WRITERS = 6


def _expiring(scope_id: str, i: int) -> dict[str, Any]:
    soon = timezone.now() + timedelta(seconds=30)
    return note_body(scope_id, f"old-{i}", content=f"old {i}", expires_at=soon)


def test_purges_captures_and_replays_race_without_loss(
    api: ApiClient, admin_token: str
) -> None:
    scope_id = create_scope(api)
    bodies = [_expiring(scope_id, i) for i in range(NOTES)]
    receipts = [api.post("/v1/sources/working-notes", b).json() for b in bodies]
    later = timezone.now() + timedelta(hours=1)

    def work(index: int) -> Any:
        if index < PURGERS:
            return purge_run(
                principal=Principal("cron"),
                scope_id=scope_id,
                older_than=timedelta(minutes=10),
                dry_run=False,
                batch=7,
                now=later,
            )
        client, answers = ApiClient(admin_token), []
        for i in range(index - PURGERS, NOTES, WRITERS):
            replay = client.post("/v1/sources/working-notes", bodies[i])
            fresh = client.post(
                "/v1/sources/working-notes",
                note_body(scope_id, f"new-{i}", content=f"new {i}"),
            )
            conflict = client.post(
                "/v1/sources/working-notes", {**bodies[i], "content": "other"}
            )
            answers.append((i, replay.status_code, replay.json(), fresh.status_code))
            answers.append((i, conflict.status_code, None, None))
        return answers

    results = race(PURGERS + WRITERS, work)

    assert not [r for r in results if isinstance(r, Exception)]
    runs = results[:PURGERS]
    assert sum(run.purged for run in runs) == NOTES
    answers = [answer for writer in results[PURGERS:] for answer in writer]
    assert Counter(status for _, status, _, _ in answers) == {202: NOTES, 409: NOTES}
    for i, status, body, fresh in answers:
        if status == 202:
            assert (body, fresh) == (receipts[i], 202)
    rows = ContentSource.objects.filter(scope_id=scope_id)
    assert rows.filter(purged_at__isnull=False).count() == NOTES
    assert set(
        rows.filter(purged_at__isnull=False).values_list("purge_run", flat=True)
    ) <= {run.run_id for run in runs}
    assert (
        rows.filter(source_id__startswith="new-", content__isnull=False).count()
        == NOTES
    )
    assert sorted(rows.values_list("position", flat=True)) == list(
        range(1, 2 * NOTES + 1)
    )
