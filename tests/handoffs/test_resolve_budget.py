"""An evidence resolution never answers more than the response budget
(spec/limits.md 2): it is refused before any content is read, and says how to
split the call; cited Sources are read once however often they are cited."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.conftest import ApiClient, error_of
from tests.handoffs.helpers import capture
from tests.handoffs.test_resolve import digest_of, ref, resolve

pytestmark = pytest.mark.django_db

TEXT = "x" * 1000  # stored as canonical JSON: 1002 bytes


@pytest.fixture
def budget_of_two(settings: Any) -> None:
    """Room for the content of two of the Sources below, not three."""
    settings.POWERCONTEXT_MAX_RESPONSE_BYTES = 2 * 1002 + 500


@pytest.fixture
def three(api: ApiClient, scope_id: str) -> str:
    for name in ("a", "b", "c"):
        capture(api, scope_id, name, TEXT)
    return scope_id


def content_reads(queries: CaptureQueriesContext) -> list[str]:
    """The statements that read a Source's ``content`` column."""
    return [
        q["sql"]
        for q in queries.captured_queries
        if '"content"' in q["sql"]
        and "OCTET_LENGTH" not in q["sql"].upper()
        and "LENGTH(CAST" not in q["sql"].upper()
    ]


def test_an_answer_over_the_budget_is_refused_before_content_is_read(
    api: ApiClient, three: str, budget_of_two: None
) -> None:
    with CaptureQueriesContext(connection) as queries:
        response = resolve(api, three, "handoff", ref("a"), ref("b"), ref("c"))

    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "response_too_large"
    assert error["details"] == {
        "field": "refs",
        "reason": "response_too_large",
        "bytes": 3 * 1002,
        "max_bytes": 2 * 1002 + 500,
        "available_that_fit": 2,
    }
    assert "the first 2 available Sources fit in one call" in error["message"]
    assert content_reads(queries) == []


def test_the_split_the_error_suggests_is_answered(
    api: ApiClient, three: str, budget_of_two: None
) -> None:
    first = resolve(api, three, "handoff", ref("a"), ref("b"))
    rest = resolve(api, three, "handoff", ref("c"))

    assert first.status_code == rest.status_code == 200
    contents = [
        i["source"]["content"] for i in [*first.json()["items"], *rest.json()["items"]]
    ]
    assert contents == [TEXT] * 3


def test_unavailable_items_carry_no_content_and_cost_nothing(
    api: ApiClient, three: str, budget_of_two: None
) -> None:
    wrong = "sha256:" + "0" * 64
    response = resolve(
        api,
        three,
        "handoff",
        ref("a"),
        ref("b", wrong),
        ref("c", digest_of(TEXT)),
        ref("missing"),
    )

    assert response.status_code == 200
    assert [i["reason"] for i in response.json()["items"]] == [
        None,
        "digest_mismatch",
        None,
        "not_found",
    ]


def test_a_source_cited_twice_is_read_once_and_counted_twice(
    api: ApiClient, three: str, budget_of_two: None
) -> None:
    with CaptureQueriesContext(connection) as queries:
        twice = resolve(api, three, "handoff", ref("a"), ref("a"))
    reads = content_reads(queries)  # before the next request resets the log
    thrice = resolve(api, three, "handoff", ref("a"), ref("a"), ref("a"))

    assert twice.status_code == 200
    assert [i["source"]["content"] for i in twice.json()["items"]] == [TEXT, TEXT]
    (read,) = reads
    assert re.search(r"IN \(\d+\)", read), read  # one id, read once
    assert thrice.status_code == 422
    assert error_of(thrice)["details"]["available_that_fit"] == 2


def test_one_source_always_fits(api: ApiClient, scope_id: str, settings: Any) -> None:
    """A Source is at most POWERCONTEXT_MAX_SOURCE_BYTES, never over the budget;
    even a budget below one Source answers one at a time."""
    capture(api, scope_id, "big", TEXT)
    settings.POWERCONTEXT_MAX_RESPONSE_BYTES = 10

    response = resolve(api, scope_id, "handoff", ref("big"))

    assert response.status_code == 200
    assert response.json()["items"][0]["source"]["content"] == TEXT
