"""What a command does is recorded under a name no token can act as: audit records
name the principal that acted.

A token's principal is named in the same columns (``started_by``, an envelope
revision's ``principal``, ``exported_by``); the names of commands are reserved
(``cli:...``, decision 0031), so a record a command wrote is never read as a
token's.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import call_command

from lifecycle.models import ExportRecord, PurgeRun
from sessions_app.models import EnvelopeRevision, WriteOperation
from tests.conftest import ApiClient
from tests.lifecycle.helpers import close

pytestmark = pytest.mark.django_db


def _mint(api: ApiClient, scope_id: str, name: str) -> tuple[int, object]:
    """The status of minting a token for ``name``, and the refusal's reason."""
    response = api.post(
        "/v1/tokens",
        {"name": name, "grants": [{"scope": scope_id, "role": "admin"}]},
    )
    error = response.json().get("error", {})
    return response.status_code, error.get("details", {}).get("reason")


def test_the_purge_command_records_a_name_no_token_may_take(
    api: ApiClient, scope_id: str
) -> None:
    notes = f"/v1/scopes/{scope_id}/sessions/sess-1/working-notes"
    assert api.put(notes, {"notes": "to be purged"}).status_code == 201
    close(api, scope_id)

    call_command("purge_working_notes", "--older-than", "0s", stdout=io.StringIO())

    run = PurgeRun.objects.get()
    erased = EnvelopeRevision.objects.get(operation=WriteOperation.NOTES_ERASED)
    assert run.envelopes_cleared == 1
    assert erased.principal == run.started_by == "cli:purge_working_notes"
    assert _mint(api, scope_id, run.started_by) == (422, "reserved")


def test_the_export_command_records_a_name_no_token_may_take(
    api: ApiClient, scope_id: str, tmp_path: Path
) -> None:
    call_command(
        "export_scope",
        scope_id,
        "--output",
        str(tmp_path / "scope.ndjson"),
        stdout=io.StringIO(),
        stderr=io.StringIO(),
    )

    record = ExportRecord.objects.get()
    assert (record.exported_by, record.via) == ("cli:export_scope", "command")
    assert _mint(api, scope_id, record.exported_by) == (422, "reserved")
