"""A search walk while captures go on (PostgreSQL, real threads): its pages
neither repeat nor skip a Source that matched when the walk began."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest

from tests.concurrency.conftest import race
from tests.conftest import ApiClient, create_scope

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

WRITERS = 4
PER_WRITER = 15


def content(index: int) -> str:
    # Lengths vary, so ranks interleave old and new Sources.
    return "needle " + "hay " * (index % 9)


def walk(token: str, scope_id: str) -> list[str]:
    seen: list[str] = []
    cursor = None
    while True:
        params = {"q": "needle", "limit": "3"}
        if cursor is not None:
            params["cursor"] = cursor
        response = ApiClient(token).get(
            f"/v1/scopes/{scope_id}/search?{urlencode(params)}"
        )
        assert response.status_code == 200, response.content
        body = response.json()
        seen += [item["source_id"] for item in body["items"]]
        cursor = body["next_cursor"]
        if cursor is None:
            return seen


def write(token: str, scope_id: str, writer: int) -> None:
    for index in range(PER_WRITER):
        response = ApiClient(token).post(
            "/v1/sources/content",
            {
                "scope_id": scope_id,
                "source_id": f"new-{writer}-{index}",
                "content": content(index),
            },
        )
        assert response.status_code == 202, response.content


def test_a_walk_during_captures_sees_every_earlier_match_once(
    api: ApiClient, admin_token: str
) -> None:
    scope_id = create_scope(api)
    earlier = [f"old-{index}" for index in range(30)]
    for index, source_id in enumerate(earlier):
        api.post(
            "/v1/sources/content",
            {"scope_id": scope_id, "source_id": source_id, "content": content(index)},
        )

    def work(index: int) -> Any:
        if index == 0:
            return walk(admin_token, scope_id)
        return write(admin_token, scope_id, index)

    results = race(WRITERS + 1, work)

    assert not [r for r in results if isinstance(r, BaseException)]
    seen = results[0]
    assert len(seen) == len(set(seen))
    assert set(earlier) <= set(seen)
    assert len(walk(admin_token, scope_id)) == 30 + WRITERS * PER_WRITER
