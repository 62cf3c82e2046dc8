"""Redaction (spec/handoff.md 3): any Source becomes a tombstone, and its text is
nowhere in the database afterwards."""

from __future__ import annotations

from typing import Any

import pytest

from lifecycle.models import Redaction
from sources.models import ContentSource
from tests.conftest import ApiClient, error_of
from tests.handoffs import helpers as handoff
from tests.lifecycle.helpers import (
    audit,
    hold,
    note,
    redact,
    resolve,
    source,
    tables_holding,
)

pytestmark = pytest.mark.django_db

SECRET = "sk-live-0123456789abcdef-SECRET"


def test_redacting_a_plain_source_makes_a_tombstone(
    api: ApiClient, scope_id: str
) -> None:
    body = {"scope_id": scope_id, "source_id": "c-1", "content": SECRET}
    receipt = api.post("/v1/sources/content", body).json()
    digest = source(api, scope_id, "c-1")["content_digest"]

    response = redact(api, scope_id, "c-1", reason="GDPR erasure #7")

    assert response.status_code == 200
    record = response.json()
    assert (record["content"], record["metadata"], record["state"]) == (
        None,
        None,
        "purged",
    )
    assert record["content_digest"] == digest
    assert record["purge_run"].startswith("red_")
    assert source(api, scope_id, "c-1")["content"] is None
    assert api.post("/v1/sources/content", body).json() == receipt
    conflict = api.post("/v1/sources/content", {**body, "content": "other"})
    assert error_of(conflict)["code"] == "source_conflict"
    assert resolve(api, scope_id, "c-1") == ["purged"]
    assert Redaction.objects.get().reason == "GDPR erasure #7"
    assert tables_holding(SECRET) == []


def test_redacting_a_note_erases_it_from_envelopes_and_their_revisions(
    api: ApiClient, scope_id: str
) -> None:
    notes = f"/v1/scopes/{scope_id}/sessions/sess-1/working-notes"
    api.put(notes, {"notes": SECRET, "capture": {"source_id": "wn-1"}})
    api.put(notes, {"notes": "later notes"})
    api.put(f"/v1/scopes/{scope_id}/sessions/other/working-notes", {"notes": SECRET})
    # On SQLite the search's FTS5 tables hold copies too (docs/operations.md).
    assert set(tables_holding(SECRET)) >= {
        "sources_contentsource",
        "sessions_app_sessionenvelope",
        "sessions_app_envelopevalue",
    }

    response = redact(api, scope_id, "wn-1")

    assert response.status_code == 200
    assert tables_holding(SECRET) == []
    assert api.get(notes).json()["notes"] == "later notes"
    other = api.get(f"/v1/scopes/{scope_id}/sessions/other/working-notes").json()
    assert other["notes"] is None
    assert resolve(api, scope_id, "wn-1") == ["purged"]
    replay = api.put(notes, {"notes": "later notes"})
    assert replay.status_code == 200


def test_redacting_twice_returns_the_tombstone_and_records_once(
    api: ApiClient, scope_id: str
) -> None:
    note(api, scope_id, "n-1")
    first = redact(api, scope_id, "n-1")
    second = redact(api, scope_id, "n-1")

    assert second.status_code == 200
    assert second.json()["purge_run"] == first.json()["purge_run"]
    assert Redaction.objects.count() == 1


def test_a_cited_source_is_redacted_and_its_citation_becomes_unavailable(
    api: ApiClient, scope_id: str
) -> None:
    handoff.capture(api, scope_id, "c-1", content=SECRET)
    handoff.committed(api, scope_id, handoff.draft([handoff.sc("c-1")]))

    assert redact(api, scope_id, "c-1").status_code == 200
    continued = handoff.select(api, handoff.CONTINUE, scope_id, "latest").json()
    assert continued["evidence_checks"][0]["status"] == "unavailable"
    assert tables_holding(SECRET) == []


def test_a_held_scope_refuses_redaction(api: ApiClient, scope_id: str) -> None:
    handoff.capture(api, scope_id, "c-1", content=SECRET)
    hold(api, scope_id)

    response = redact(api, scope_id, "c-1")

    assert response.status_code == 409
    assert error_of(response)["code"] == "legal_hold"
    assert audit(api, scope_id, "c-1")["state"] == "active"
    assert Redaction.objects.count() == 0


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/v1/scopes/{scope}/sources/content/missing/redact", {"reason": "r"}, 404),
        ("/v1/scopes/nope/sources/content/c-1/redact", {"reason": "r"}, 404),
        ("/v1/scopes/{scope}/sources/content/c-1/redact", {}, 422),
        ("/v1/scopes/{scope}/sources/content/c-1/redact", {"reason": " "}, 422),
        ("/v1/scopes/{scope}/sources/other/c-1/redact", {"reason": "r"}, 422),
    ],
)
def test_bad_redactions(
    api: ApiClient, scope_id: str, path: str, body: Any, status: int
) -> None:
    handoff.capture(api, scope_id, "c-1")

    response = api.post(path.format(scope=scope_id), body)

    assert response.status_code == status
    assert ContentSource.objects.filter(purged_at__isnull=False).count() == 0


def test_a_source_whose_id_ends_in_redact_is_still_read_and_redacted(
    api: ApiClient, scope_id: str
) -> None:
    handoff.capture(api, scope_id, "x/redact", content="kept")

    read = api.get(f"/v1/scopes/{scope_id}/sources/content/x/redact")
    redacted = redact(api, scope_id, "x/redact")

    assert (read.status_code, read.json()["content"]) == (200, "kept")
    assert redacted.json()["source_id"] == "x/redact"
