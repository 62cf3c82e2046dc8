"""Nothing a legal hold covers is erased by any path: redaction, purge (API and
command) and envelope revision pruning."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core.management import call_command

from lifecycle.models import Redaction
from sessions_app.models import EnvelopeRevision
from sessions_app.selectors import revision_meta
from tests.conftest import ApiClient, error_of
from tests.lifecycle.helpers import audit, hold, redact, release

pytestmark = pytest.mark.django_db

TEXT = "the text an erasure request names, kept by a held session's notes"
START = datetime(2026, 1, 1, tzinfo=UTC)


def _notes(scope_id: str, session_id: str) -> str:
    return f"/v1/scopes/{scope_id}/sessions/{session_id}/working-notes"


def _envelope(api: ApiClient, scope_id: str, session_id: str) -> dict:
    response = api.get(f"/v1/scopes/{scope_id}/sessions/{session_id}/envelope")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_redaction_refuses_while_a_hold_covers_an_envelope_copy_of_the_text(
    api: ApiClient, scope_id: str
) -> None:
    api.put(_notes(scope_id, "s-held"), {"notes": TEXT})
    hold_id = hold(api, scope_id, "s-held").json()["hold_id"]
    body = {"scope_id": scope_id, "source_id": "plain", "content": TEXT}
    assert api.post("/v1/sources/content", body).status_code == 202

    response = redact(api, scope_id, "plain")

    assert response.status_code == 409
    assert error_of(response)["code"] == "legal_hold"
    assert error_of(response)["details"] == {
        "scope_held": False,
        "held_sessions": ["s-held"],
    }
    held = _envelope(api, scope_id, "s-held")
    assert (held["version"], held["meta"]) == (1, {"workingNotes": TEXT})
    assert audit(api, scope_id, "plain")["state"] == "active"
    assert Redaction.objects.count() == 0

    release(api, scope_id, hold_id)
    assert redact(api, scope_id, "plain").status_code == 200
    assert _envelope(api, scope_id, "s-held")["meta"] == {}


def test_a_redaction_refuses_while_a_hold_covers_a_copy_in_an_old_revision(
    api: ApiClient, scope_id: str
) -> None:
    api.put(_notes(scope_id, "s-held"), {"notes": TEXT})
    api.put(_notes(scope_id, "s-held"), {"notes": "newer notes"})
    hold(api, scope_id, "s-held")
    body = {"scope_id": scope_id, "source_id": "plain", "content": TEXT}
    api.post("/v1/sources/content", body)

    response = redact(api, scope_id, "plain")

    assert error_of(response)["details"]["held_sessions"] == ["s-held"]
    first = EnvelopeRevision.objects.get(version=1)
    assert revision_meta(first) == {"workingNotes": TEXT}


def test_a_scope_hold_names_every_session_with_a_copy(
    api: ApiClient, scope_id: str
) -> None:
    api.put(_notes(scope_id, "s-b"), {"notes": TEXT, "capture": {"source_id": "wn-b"}})
    api.put(_notes(scope_id, "s-a"), {"notes": TEXT})
    hold(api, scope_id)

    response = redact(api, scope_id, "wn-b")

    assert response.status_code == 409
    assert error_of(response)["details"] == {
        "scope_held": True,
        "held_sessions": ["s-a", "s-b"],
    }


# --- Revision pruning ---------------------------------------------------------------


def _write_at(
    api: ApiClient, scope_id: str, session_id: str, moment: datetime, cwd: str
) -> None:
    with time_machine.travel(moment, tick=False):
        response = api.patch(
            f"/v1/scopes/{scope_id}/sessions/{session_id}/envelope",
            {"meta": {"cwd": cwd + "." * 100}},
        )
    assert response.status_code in (200, 201), response.content


def _prune_at(moment: datetime) -> str:
    out = io.StringIO()
    with time_machine.travel(moment, tick=False):
        call_command("prune_envelope_revisions", stdout=out)
    return out.getvalue()


def _versions(session_id: str) -> list[int]:
    return sorted(
        EnvelopeRevision.objects.filter(envelope__session_id=session_id).values_list(
            "version", flat=True
        )
    )


@pytest.mark.parametrize("held_session", ["s-held", None])
def test_pruning_keeps_every_revision_of_a_held_envelope(
    api: ApiClient, scope_id: str, held_session: str | None
) -> None:
    for session_id in ("s-held", "s-free"):
        _write_at(api, scope_id, session_id, START, "/v1")
        _write_at(api, scope_id, session_id, START + timedelta(days=1), "/v2")
    hold_id = hold(api, scope_id, held_session).json()["hold_id"]

    output = _prune_at(START + timedelta(days=60))

    assert _versions("s-held") == [1, 2]
    assert _versions("s-free") == ([1, 2] if held_session is None else [2])
    assert "held envelopes kept whole" in output
    assert revision_meta(
        EnvelopeRevision.objects.get(envelope__session_id="s-held", version=1)
    ) == {"cwd": "/v1" + "." * 100}

    release(api, scope_id, hold_id)
    _prune_at(START + timedelta(days=60))
    assert _versions("s-held") == [2]
