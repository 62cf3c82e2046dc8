"""An export is the scope as of one instant: a capture committed while the bundle
streams is not in it, and the bundle still verifies (REPEATABLE READ)."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime

import pytest
from django.db import connection

from lifecycle.bundles.export import Selection, bundle_lines
from lifecycle.bundles.format import check_lines
from tests.conftest import ApiClient

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _capture(api: ApiClient, scope_id: str, source_id: str) -> None:
    body = {"scope_id": scope_id, "source_id": source_id, "content": "x"}
    assert api.post("/v1/sources/content", body).status_code == 202


def test_a_capture_during_an_export_is_not_in_its_bundle(
    api: ApiClient, scope_id: str
) -> None:
    for index in range(3):
        _capture(api, scope_id, f"before-{index}")
    lines = bundle_lines(selection=Selection(scope_id), created_at=datetime.now(UTC))
    first = [next(lines), next(lines)]  # the manifest: the snapshot is taken

    def capture_elsewhere() -> None:
        try:
            _capture(api, scope_id, "during")
        finally:
            connection.close()

    thread = threading.Thread(target=capture_elsewhere)
    thread.start()
    thread.join()
    bundle = [*first, *lines]

    records = [json.loads(line)["record"] for line in bundle]
    ids = [r["source_id"] for r in records if r["kind"] == "source"]
    assert ids == ["before-0", "before-1", "before-2"]
    assert records[1]["last_position"] == 3
    assert check_lines(bundle).problems == []
    assert api.get(f"/v1/scopes/{scope_id}/sources/content/during").status_code == 200
