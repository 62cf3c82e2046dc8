"""Every lifecycle action is visible, read-only, in the admin."""

from __future__ import annotations

from typing import Any

import pytest

from lifecycle.models import (
    ExportRecord,
    LegalHold,
    LegalHoldRelease,
    PurgeRun,
    Redaction,
)
from sources.models import ContentSource, SessionClosure
from tests.conftest import ApiClient
from tests.lifecycle.helpers import close, hold, note, purge, redact, release

pytestmark = pytest.mark.django_db

MODELS = {
    "sources/sessionclosure": SessionClosure,
    "lifecycle/legalhold": LegalHold,
    "lifecycle/legalholdrelease": LegalHoldRelease,
    "lifecycle/purgerun": PurgeRun,
    "lifecycle/redaction": Redaction,
    "lifecycle/exportrecord": ExportRecord,
}


@pytest.fixture
def actions(api: ApiClient, scope_id: str) -> str:
    note(api, scope_id, "n-1", content="secret note")
    close(api, scope_id)
    hold_id = hold(api, scope_id, "sess-9").json()["hold_id"]
    release(api, scope_id, hold_id)
    purge(api, scope_id, dry_run=True)
    redact(api, scope_id, "n-1")
    assert api.get(f"/v1/scopes/{scope_id}/export").status_code == 200
    return scope_id


@pytest.mark.parametrize("path", sorted(MODELS))
def test_each_record_is_listed_and_shown_read_only(
    admin_client: Any, actions: str, path: str
) -> None:
    record = MODELS[path].objects.get()

    listing = admin_client.get(f"/admin/{path}/")
    detail = admin_client.get(f"/admin/{path}/{record.pk}/change/")
    add = admin_client.get(f"/admin/{path}/add/")
    delete = admin_client.post(f"/admin/{path}/{record.pk}/delete/", {"post": "yes"})

    assert listing.status_code == 200
    assert detail.status_code == 200
    assert b'type="submit"' not in detail.content.split(b"<form")[-1]
    assert add.status_code == 403
    assert delete.status_code == 403
    assert MODELS[path].objects.count() == 1


def test_a_tombstone_shows_as_such(admin_client: Any, actions: str) -> None:
    source = ContentSource.objects.get(source_id="n-1")

    response = admin_client.get(f"/admin/sources/contentsource/{source.pk}/change/")

    assert b"tombstone" in response.content
    assert b"secret note" not in response.content


def test_the_state_filter_offers_every_state(admin_client: Any, actions: str) -> None:
    purged = admin_client.get("/admin/sources/contentsource/", {"state": "purged"})

    assert b"n-1" in purged.content
    for state in (b"active", b"expired", b"closed", b"purged"):
        assert b"?state=" + state in purged.content
