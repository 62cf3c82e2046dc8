"""Finding every copy of a text and erasing it: the envelope search and
``POST /v1/scopes/{scope_id}/redactions`` (docs/api.md, "Search")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from lifecycle.models import Redaction
from lifecycle.services import matching
from sources.models import ContentSource
from tests.conftest import ApiClient, error_of
from tests.lifecycle.helpers import audit, hold, tables_holding
from tests.search.helpers import (
    capture,
    envelopes_found,
    found,
    redact_matching,
    search_envelopes,
)

pytestmark = pytest.mark.django_db

SECRET = "sk_live_4fAB9xYZ77secret"


def put_notes(api: ApiClient, scope_id: str, session_id: str, notes: str, **kw: Any):  # type: ignore[no-untyped-def]
    response = api.put(
        f"/v1/scopes/{scope_id}/sessions/{session_id}/working-notes",
        {"notes": notes, **kw},
    )
    assert response.status_code in {200, 201}, response.content
    return response


def every_row() -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, to prove a dry run wrote nothing."""
    rows = {}
    with connection.cursor() as cursor:
        for table in sorted(connection.introspection.table_names(cursor)):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            rows[table] = sorted(map(repr, cursor.fetchall()))
    return rows


def test_live_notes_are_searchable_with_their_version(
    api: ApiClient, scope_id: str
) -> None:
    put_notes(api, scope_id, "sess-a", f"rotate {SECRET} today")
    put_notes(api, scope_id, "sess-b", "nothing to see")
    put_notes(api, scope_id, "sess-c", f"old {SECRET}")
    put_notes(api, scope_id, "sess-c", "replaced notes")

    response = search_envelopes(api, scope_id, "4fab9x", match="substring")

    assert response.status_code == 200
    (item,) = response.json()["items"]
    envelope = api.get(f"/v1/scopes/{scope_id}/sessions/sess-a/envelope").json()
    assert item == {
        "session_id": "sess-a",
        "version": envelope["version"],
        "snippet": f"rotate {SECRET} today",
    }
    assert envelopes_found(api, scope_id, "rotate -today") == []
    assert envelopes_found(api, scope_id, "replaced") == ["sess-c"]


def test_envelope_search_is_scoped_and_validated(
    api: ApiClient, scope_id: str, client_for: Callable[..., ApiClient]
) -> None:
    put_notes(api, scope_id, "sess-a", "confidential plan")
    outsider = client_for("scp_other:viewer")

    assert search_envelopes(outsider, scope_id, "plan").status_code == 403
    short = search_envelopes(api, scope_id, "pl", match="substring")
    assert (short.status_code, error_of(short)["details"]["reason"]) == (
        422,
        "too_short",
    )


def test_a_run_redacts_every_match_and_every_envelope_copy(
    api: ApiClient, scope_id: str
) -> None:
    capture(api, scope_id, "plain", f"key={SECRET}")
    capture(api, scope_id, "meta", "see ticket", {"leak": SECRET})
    capture(api, scope_id, "unrelated", "nothing secret here")
    put_notes(api, scope_id, "sess-1", SECRET, capture={"source_id": "wn-1"})
    put_notes(api, scope_id, "sess-2", SECRET)  # a copy of wn-1's text
    put_notes(api, scope_id, "sess-3", f"notes alone: {SECRET}")  # no Source

    response = redact_matching(api, scope_id, "4fAB9xYZ", match="substring")

    assert response.status_code == 200
    run = response.json()
    assert (run["dry_run"], run["complete"], run["held"], run["held_envelopes"]) == (
        False,
        True,
        [],
        [],
    )
    redacted = {item["source_id"]: item for item in run["redacted"]}
    assert set(redacted) == {"plain", "meta", "wn-1"}
    assert run["envelopes"] == ["sess-1", "sess-2", "sess-3"]
    assert tables_holding(SECRET) == []
    assert found(api, scope_id, "4fAB9xYZ", match="substring") == []
    assert envelopes_found(api, scope_id, "4fAB9xYZ", match="substring") == []
    assert found(api, scope_id, "secret") == ["unrelated"]
    records = Redaction.objects.filter(scope_id=scope_id)
    assert {r.redaction_id for r in records} == {
        item["redaction_id"] for item in run["redacted"]
    }
    assert {r.reason for r in records} == {"erasure request"}
    assert audit(api, scope_id, "plain")["state"] == "purged"
    assert (
        audit(api, scope_id, "plain")["purge_run"] == redacted["plain"]["redaction_id"]
    )


def test_a_held_match_is_reported_and_kept(api: ApiClient, scope_id: str) -> None:
    capture(api, scope_id, "plain", f"key={SECRET}")
    put_notes(api, scope_id, "sess-held", SECRET, capture={"source_id": "wn-held"})
    put_notes(api, scope_id, "sess-copy", SECRET)  # a copy of the held note
    put_notes(api, scope_id, "sess-own", f"held alone {SECRET}")
    hold(api, scope_id, "sess-held")
    hold(api, scope_id, "sess-own")

    run = redact_matching(api, scope_id, SECRET, match="substring").json()

    assert [item["source_id"] for item in run["redacted"]] == ["plain"]
    assert run["held"] == [
        {
            "source_type": "content",
            "source_id": "wn-held",
            "position": 2,
            "scope_held": False,
            "held_sessions": ["sess-held"],
        }
    ]
    assert run["held_envelopes"] == ["sess-copy", "sess-held", "sess-own"]
    assert run["envelopes"] == []
    assert found(api, scope_id, SECRET, match="substring") == ["wn-held"]
    assert envelopes_found(api, scope_id, SECRET, match="substring") == [
        "sess-copy",
        "sess-held",
        "sess-own",
    ]
    assert ContentSource.objects.get(source_id="wn-held").content is not None


def test_a_scope_hold_keeps_everything(api: ApiClient, scope_id: str) -> None:
    capture(api, scope_id, "plain", f"key={SECRET}")
    hold(api, scope_id)

    run = redact_matching(api, scope_id, SECRET, match="substring").json()

    assert (run["redacted"], [h["scope_held"] for h in run["held"]]) == ([], [True])
    assert found(api, scope_id, SECRET, match="substring") == ["plain"]


def test_a_hold_set_during_the_run_keeps_the_held_sources_envelope_copies(
    api: ApiClient, scope_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Source a hold keeps once the run has started keeps every copy, as a Source
    held when the run was planned does: its session's and another session's
    envelope whose live notes are the same text: nothing a hold covers is erased,
    by the bulk path either."""
    put_notes(api, scope_id, "sess-src", SECRET, capture={"source_id": "wn-1"})
    put_notes(api, scope_id, "sess-copy", SECRET)
    planned = matching._plan

    def plan_then_hold(*args: Any, **kwargs: Any) -> Any:
        run = planned(*args, **kwargs)
        assert hold(api, scope_id, "sess-src").status_code == 201
        return run

    monkeypatch.setattr(matching, "_plan", plan_then_hold)

    run = redact_matching(api, scope_id, SECRET, match="substring").json()

    assert (run["redacted"], [item["source_id"] for item in run["held"]]) == (
        [],
        ["wn-1"],
    )
    assert envelopes_found(api, scope_id, SECRET, match="substring") == [
        "sess-copy",
        "sess-src",
    ]
    assert ContentSource.objects.get(source_id="wn-1").content is not None
    assert run["held"][0]["held_sessions"] == ["sess-src"]
    assert (run["envelopes"], run["held_envelopes"]) == (
        [],
        ["sess-copy", "sess-src"],
    )


def test_a_dry_run_answers_what_the_real_run_erases_and_changes_nothing(
    api: ApiClient, scope_id: str
) -> None:
    capture(api, scope_id, "plain", f"key={SECRET}")
    capture(api, scope_id, "second", f"also {SECRET}")
    put_notes(api, scope_id, "sess-1", SECRET, capture={"source_id": "wn-1"})
    put_notes(api, scope_id, "sess-2", f"alone {SECRET}")
    put_notes(api, scope_id, "sess-held", f"held {SECRET}")
    hold(api, scope_id, "sess-held")
    before = every_row()

    dry = redact_matching(api, scope_id, "4fab9x", match="substring", dry_run=True)

    assert dry.status_code == 200
    assert every_row() == before
    real = redact_matching(api, scope_id, "4fab9x", match="substring").json()

    def without_ids(run: dict[str, Any]) -> dict[str, Any]:
        items = [{**item, "redaction_id": None} for item in run["redacted"]]
        return {**run, "dry_run": None, "redacted": items}

    assert dry.json()["dry_run"] is True
    assert {item["redaction_id"] for item in dry.json()["redacted"]} == {None}
    assert without_ids(dry.json()) == without_ids(real)
    assert len(real["redacted"]) == 3
    assert real["held_envelopes"] == ["sess-held"]


def test_words_redaction_and_a_second_run_finds_nothing(
    api: ApiClient, scope_id: str
) -> None:
    capture(api, scope_id, "a", "the codename is bluebird")
    capture(api, scope_id, "b", "bluebird and robin")
    capture(api, scope_id, "c", "robin only")

    first = redact_matching(api, scope_id, "bluebird -robin").json()
    again = redact_matching(api, scope_id, "bluebird -robin").json()

    assert [item["source_id"] for item in first["redacted"]] == ["a"]
    assert again["redacted"] == []
    assert sorted(found(api, scope_id, "robin")) == ["b", "c"]


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"q": "", "reason": "r", "dry_run": True}, 422),
        ({"q": "ab", "match": "substring", "reason": "r", "dry_run": True}, 422),
        ({"q": "x", "reason": "", "dry_run": True}, 422),
        ({"q": "x", "reason": "r"}, 422),
        ({"q": "x", "reason": "r", "dry_run": True, "extra": 1}, 422),
    ],
)
def test_a_bad_redaction_request_is_422(
    api: ApiClient, scope_id: str, body: dict[str, Any], status: int
) -> None:
    response = api.post(f"/v1/scopes/{scope_id}/redactions", body)

    assert response.status_code == status
    assert error_of(response)["code"] == "invalid_request"


def test_a_viewer_cannot_redact(
    api: ApiClient, scope_id: str, client_for: Callable[..., ApiClient]
) -> None:
    capture(api, scope_id, "plain", f"key={SECRET}")
    viewer = client_for(f"{scope_id}:viewer")

    response = redact_matching(viewer, scope_id, SECRET, match="substring")

    assert response.status_code == 403
    assert found(api, scope_id, SECRET, match="substring") == ["plain"]
