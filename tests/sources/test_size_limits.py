"""What one Source and one answer may weigh (spec/limits.md 2).

Every capture path refuses content or metadata over
``POWERCONTEXT_MAX_SOURCE_BYTES`` (canonical JSON, UTF-8 bytes) with a 422 that
names the field, writing nothing. No list page carries more than
``POWERCONTEXT_MAX_RESPONSE_BYTES`` of stored content: it stops early and hands
out a cursor for the rest, and every Source is still listed exactly once.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client, override_settings

from sources.models import CaptureAttempt, ContentSource
from tests.conftest import ApiClient, error_of

pytestmark = pytest.mark.django_db
CAP = 1000


def _too_large(response: Any, field: str) -> None:
    assert response.status_code == 422, response.content
    details = error_of(response)["details"]
    assert (details["field"], details["reason"]) == (field, "too_large")
    assert details["max_bytes"] == CAP
    assert details["bytes"] > CAP


@override_settings(POWERCONTEXT_MAX_SOURCE_BYTES=CAP)
@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/v1/sources/content", {"source_id": "s", "content": "x" * CAP}, "content"),
        (
            "/v1/sources/content",
            {"source_id": "s", "content": "x", "metadata": {"m": "y" * CAP}},
            "metadata",
        ),
        (
            "/v1/sources/working-notes",
            {
                "source_id": "n",
                "content": "é" * (CAP // 2),  # 2 bytes each, plus the quotes
                "session_id": "s",
                "note_kind": "inspection",
            },
            "content",
        ),
    ],
)
def test_captures_over_the_source_cap_are_refused(
    api: ApiClient, scope_id: str, path: str, body: dict[str, Any], field: str
) -> None:
    response = api.post(path, {"scope_id": scope_id, **body})

    _too_large(response, field)
    assert not ContentSource.objects.exists()
    assert not CaptureAttempt.objects.exists()


@override_settings(POWERCONTEXT_MAX_SOURCE_BYTES=CAP)
def test_created_content_over_the_cap_is_refused(api: ApiClient, scope_id: str) -> None:
    response = api.post(f"/v1/scopes/{scope_id}/sources", {"content": [{}] * 400})

    _too_large(response, "content")
    assert not ContentSource.objects.exists()


@override_settings(POWERCONTEXT_MAX_SOURCE_BYTES=CAP)
def test_notes_captured_over_the_cap_store_nothing(
    api: ApiClient, scope_id: str
) -> None:
    path = f"/v1/scopes/{scope_id}/sessions/s/working-notes"

    response = api.put(path, {"notes": "n" * CAP, "capture": {}})

    _too_large(response, "content")
    assert api.get(path).json()["notes"] is None
    assert not ContentSource.objects.exists()


@override_settings(POWERCONTEXT_MAX_SOURCE_BYTES=CAP)
def test_content_at_the_cap_is_accepted(api: ApiClient, scope_id: str) -> None:
    body = {"scope_id": scope_id, "source_id": "s", "content": "x" * (CAP - 2)}

    assert api.post("/v1/sources/content", body).status_code == 202
    assert ContentSource.objects.get().content_bytes == CAP


# --- The response budget -------------------------------------------------------------

BUDGET = 2500
SIZES = [1000, 1000, 1000, 200, 200, 2400, 10]  # stored bytes of each content


@pytest.fixture
def weighed(api: ApiClient, scope_id: str) -> list[str]:
    """Sources whose canonical content weighs exactly ``SIZES`` bytes."""
    ids = []
    for number, size in enumerate(SIZES, start=1):
        source_id = f"w-{number}"
        body = {
            "scope_id": scope_id,
            "source_id": source_id,
            "content": "x" * (size - 2),
        }
        assert api.post("/v1/sources/content", body).status_code == 202
        ids.append(source_id)
    return ids


def walk(api: ApiClient, path: str) -> list[list[str]]:
    pages, cursor = [], None
    while True:
        query = {"limit": 100, **({"cursor": cursor} if cursor else {})}
        body = api.get(path, query=query).json()
        pages.append([item["source_id"] for item in body["items"]])
        cursor = body["next_cursor"]
        if cursor is None:
            return pages


@override_settings(POWERCONTEXT_MAX_RESPONSE_BYTES=BUDGET)
@pytest.mark.parametrize("path", ["sources", "source-audit"])
def test_pages_stop_at_the_budget_and_walk_everything(
    api: ApiClient, scope_id: str, weighed: list[str], path: str
) -> None:
    pages = walk(api, f"/v1/scopes/{scope_id}/{path}")

    # 1000+1000 (a third would pass 2500); 1000+200+200; 2400 alone; then 10.
    assert pages == [["w-1", "w-2"], ["w-3", "w-4", "w-5"], ["w-6", "w-7"]]


@override_settings(POWERCONTEXT_MAX_RESPONSE_BYTES=BUDGET)
def test_the_window_stops_at_the_budget(
    api: ApiClient, scope_id: str, weighed: list[str]
) -> None:
    first = api.get(f"/v1/scopes/{scope_id}/sources/window", query={"limit": 100})
    body = first.json()

    assert [item["source_id"] for item in body["items"]] == ["w-1", "w-2"]
    assert body["next_after"] == 2  # a page the budget cut: go on from there


@override_settings(POWERCONTEXT_MAX_RESPONSE_BYTES=10)
def test_one_source_larger_than_the_budget_is_still_listed(
    api: ApiClient, scope_id: str, weighed: list[str]
) -> None:
    pages = walk(api, f"/v1/scopes/{scope_id}/sources")

    assert pages == [[source_id] for source_id in weighed]


def test_list_answers_are_streamed(api: ApiClient, scope_id: str) -> None:
    client = Client(headers={"Authorization": f"Bearer {api.token}"})

    response = client.get(f"/v1/scopes/{scope_id}/sources")

    assert response.streaming
    assert b"".join(response.streaming_content) == b'{"items":[],"next_cursor":null}'
