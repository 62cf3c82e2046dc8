"""The two forms of the one availability rule agree (decision 0012): for every
combination of note/plain, expiry, session close and tombstone, the row predicate
and the query condition put each Source in the same state."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from django.db import transaction

from sources.availability import (
    Availability,
    availability_condition,
    availability_of_row,
    session_closed_at,
)
from sources.models import ContentSource, SessionClosure
from sources.services import sources_tombstone
from tests.conftest import ApiClient
from tests.lifecycle.helpers import note_body

pytestmark = pytest.mark.django_db

NOW = datetime(2030, 1, 1, tzinfo=UTC)
WHEN = {
    "none": None,
    "past": NOW - timedelta(hours=1),
    "future": NOW + timedelta(hours=1),
}


def test_the_row_predicate_and_the_query_condition_agree(
    api: ApiClient, scope_id: str
) -> None:
    combos = list(itertools.product(WHEN, WHEN, (False, True)))
    for index, (expiry, closing, purged) in enumerate(combos):
        session = f"s{index}"
        api.post(
            "/v1/sources/working-notes",
            note_body(
                scope_id, f"n{index}", session_id=session, expires_at=WHEN[expiry]
            ),
        )
        api.post(
            "/v1/sources/content",
            {"scope_id": scope_id, "source_id": f"c{index}", "content": "c"},
        )
        if WHEN[closing] is not None:
            SessionClosure.objects.create(
                scope_id=scope_id,
                session_id=session,
                closed_at=WHEN[closing],
                closed_by="t",
                request_id="r",
            )
        if purged:
            ids = ContentSource.objects.filter(
                source_id__in=[f"n{index}", f"c{index}"]
            ).values_list("pk", flat=True)
            with transaction.atomic():
                sources_tombstone(ids=list(ids), run_id="run_x", now=NOW)
    rows = list(
        ContentSource.objects.annotate(closed_at=session_closed_at()).values(
            "source_id", "is_working_note", "expires_at", "purged_at", "closed_at"
        )
    )

    by_predicate = {
        state: {r["source_id"] for r in rows if availability_of_row(r, NOW) is state}
        for state in Availability
    }
    by_condition = {
        state: set(
            ContentSource.objects.filter(
                availability_condition(state, NOW)
            ).values_list("source_id", flat=True)
        )
        for state in Availability
    }

    assert by_condition == by_predicate
    assert all(by_predicate[state] for state in Availability)
    assert (
        sum(len(ids) for ids in by_predicate.values()) == len(rows) == 2 * len(combos)
    )
