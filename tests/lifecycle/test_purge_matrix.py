"""Purge (spec/handoff.md 3): the matrix {active, expired, closed} x {held, not
held} x {cited by a committed handoff, not cited}, before and after a purge run
through the HTTP API and through the command."""

from __future__ import annotations

import io
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine
from django.core.management import call_command

from lifecycle.models import PurgeRun
from sources.models import ContentSource
from tests.conftest import ApiClient, error_of
from tests.handoffs import helpers as handoff
from tests.lifecycle.helpers import (
    audit,
    close,
    hold,
    note,
    note_body,
    purge,
    resolve,
    source,
)

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
STATES = ("active", "expired", "closed")
CASES = list(itertools.product(STATES, (True, False), (True, False)))


@dataclass(frozen=True)
class Case:
    state: str
    held: bool
    cited: bool

    @property
    def source_id(self) -> str:
        held = "held" if self.held else "free"
        cited = "cited" if self.cited else "uncited"
        return f"{self.state}-{held}-{cited}"

    @property
    def purgeable(self) -> bool:
        return self.state != "active" and not self.held and not self.cited


def _body(scope_id: str, case: Case) -> dict[str, Any]:
    expires = T0 + timedelta(hours=1) if case.state == "expired" else None
    return note_body(
        scope_id,
        case.source_id,
        content=f"text of {case.source_id}",
        session_id=case.source_id,
        expires_at=expires,
    )


@pytest.fixture
def clock() -> Iterator[Any]:
    with time_machine.travel(T0, tick=False) as traveller:
        yield traveller


@pytest.fixture
def world(api: ApiClient, scope_id: str, clock: Any) -> dict[str, Any]:
    """Every case's note; cited ones pinned at T0, closed sessions closed at
    T0+30m, held sessions held; the clock at T0+3h."""
    cases = [Case(*values) for values in CASES]
    receipts = {}
    for case in cases:
        response = api.post("/v1/sources/working-notes", _body(scope_id, case))
        assert response.status_code == 202, response.content
        receipts[case.source_id] = response.json()
    cited = [handoff.sc(case.source_id) for case in cases if case.cited]
    handoff.committed(api, scope_id, handoff.draft(cited))
    clock.move_to(T0 + timedelta(minutes=30))
    for case in cases:
        if case.state == "closed":
            assert close(api, scope_id, case.source_id).status_code == 201
        if case.held:
            assert hold(api, scope_id, case.source_id).status_code == 201
    clock.move_to(T0 + timedelta(hours=3))
    return {"cases": cases, "receipts": receipts}


def _by_http(api: ApiClient, scope_id: str) -> dict[str, Any]:
    response = purge(api, scope_id, older_than_seconds=3600)
    assert response.status_code == 200, response.content
    return response.json()


def _by_command(api: ApiClient, scope_id: str) -> dict[str, Any]:
    out = io.StringIO()
    call_command(
        "purge_working_notes", "--older-than", "1h", "--scope", scope_id, stdout=out
    )
    assert "purged 2 notes, skipped 4 held and 2 cited" in out.getvalue()
    run = PurgeRun.objects.get()
    return {"run_id": run.run_id, "purged": run.purged}


PURGERS: dict[str, Callable[[ApiClient, str], dict[str, Any]]] = {
    "http": _by_http,
    "command": _by_command,
}


def test_before_purge_every_note_has_its_content_and_its_state(
    api: ApiClient, scope_id: str, world: dict[str, Any]
) -> None:
    cases = world["cases"]

    reasons = resolve(api, scope_id, *(case.source_id for case in cases))

    assert reasons == [None if c.state == "active" else c.state for c in cases]
    assert [source(api, scope_id, c.source_id)["content"] for c in cases] == [
        f"text of {c.source_id}" for c in cases
    ]


@pytest.mark.parametrize("purger", sorted(PURGERS))
def test_purge_tombstones_exactly_the_unheld_uncited_unavailable_notes(
    api: ApiClient, scope_id: str, world: dict[str, Any], purger: str
) -> None:
    cases = world["cases"]

    result = PURGERS[purger](api, scope_id)

    assert result["purged"] == 2
    tombstones = set(
        ContentSource.objects.filter(purged_at__isnull=False).values_list(
            "source_id", flat=True
        )
    )
    assert tombstones == {case.source_id for case in cases if case.purgeable}
    for case in cases:
        record = audit(api, scope_id, case.source_id)
        if_purged = (None, None, "purged", result["run_id"])
        kept = (f"text of {case.source_id}", record["metadata"], case.state, None)
        assert (
            record["content"],
            record["metadata"],
            record["state"],
            record["purge_run"],
        ) == (if_purged if case.purgeable else kept), case


@pytest.mark.parametrize("purger", sorted(PURGERS))
def test_after_purge_replays_conflicts_and_resolution(
    api: ApiClient, scope_id: str, world: dict[str, Any], purger: str
) -> None:
    cases = world["cases"]
    digests = {c.source_id: source(api, scope_id, c.source_id) for c in cases}

    PURGERS[purger](api, scope_id)

    reasons = resolve(api, scope_id, *(case.source_id for case in cases))
    assert reasons == [
        "purged" if c.purgeable else (None if c.state == "active" else c.state)
        for c in cases
    ]
    for case in cases:
        body = _body(scope_id, case)
        replay = api.post("/v1/sources/working-notes", body)
        conflict = api.post(
            "/v1/sources/working-notes", {**body, "content": "another value"}
        )
        record = source(api, scope_id, case.source_id)
        assert (replay.status_code, replay.json()) == (
            202,
            world["receipts"][case.source_id],
        ), case
        assert error_of(conflict)["code"] == "source_conflict", case
        assert record["content_digest"] == digests[case.source_id]["content_digest"]


def test_the_audit_state_filter_finds_the_tombstones(
    api: ApiClient, scope_id: str, world: dict[str, Any]
) -> None:
    purge(api, scope_id, older_than_seconds=3600)

    found = api.get(
        f"/v1/scopes/{scope_id}/source-audit", query={"state": "purged"}
    ).json()

    assert sorted(item["source_id"] for item in found["items"]) == [
        "closed-free-uncited",
        "expired-free-uncited",
    ]


def test_a_dry_run_counts_and_changes_nothing(
    api: ApiClient, scope_id: str, world: dict[str, Any]
) -> None:
    response = purge(api, scope_id, older_than_seconds=3600, dry_run=True)

    body = response.json()
    assert body == {
        "run_id": body["run_id"],
        "dry_run": True,
        "purged": 2,
        "skipped_held": 4,
        "skipped_cited": 2,
        "envelopes_cleared": 0,
    }
    assert not ContentSource.objects.filter(purged_at__isnull=False).exists()
    assert PurgeRun.objects.get().dry_run is True


@pytest.mark.parametrize(
    ("older_than", "purged"), [(3600, 2), (2 * 3600 + 1, 1), (3 * 3600, 0)]
)
def test_only_notes_unavailable_for_longer_than_the_age_are_purged(
    api: ApiClient, scope_id: str, world: dict[str, Any], older_than: int, purged: int
) -> None:
    # Closed at T0+30m, expired at T0+1h, now T0+3h.
    response = purge(api, scope_id, older_than_seconds=older_than)

    assert response.json()["purged"] == purged


def test_a_second_purge_finds_nothing_more(
    api: ApiClient, scope_id: str, world: dict[str, Any]
) -> None:
    purge(api, scope_id, older_than_seconds=3600)

    assert purge(api, scope_id, older_than_seconds=3600).json()["purged"] == 0


def test_a_purge_of_one_scope_leaves_others(
    api: ApiClient, scope_id: str, clock: Any
) -> None:
    from tests.conftest import create_scope

    other = create_scope(api, key="other")
    note(api, other, "n-1", expires_at=T0 + timedelta(minutes=1))
    clock.move_to(T0 + timedelta(hours=1))

    assert purge(api, scope_id).json()["purged"] == 0
    assert source(api, other, "n-1")["content"] == "a note"


@pytest.mark.parametrize(
    "body",
    [
        {"older_than_seconds": -1, "dry_run": False},
        {"older_than_seconds": "60", "dry_run": False},
        {"older_than_seconds": 1.5, "dry_run": False},
        {"older_than_seconds": 10**12, "dry_run": False},
        {"older_than_seconds": 60},
        {"older_than_seconds": 60, "dry_run": "yes"},
        {"older_than_seconds": 60, "dry_run": True, "scope": "x"},
    ],
)
def test_bad_purges_are_422(api: ApiClient, scope_id: str, body: Any) -> None:
    response = api.post(f"/v1/scopes/{scope_id}/purge", body)

    assert response.status_code == 422
    assert PurgeRun.objects.count() == 0


def test_purge_of_an_unknown_scope_is_404(api: ApiClient) -> None:
    response = purge(api, "nope")

    assert (response.status_code, error_of(response)["code"]) == (
        404,
        "scope_not_found",
    )
