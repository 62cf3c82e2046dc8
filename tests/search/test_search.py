"""Search through HTTP (docs/api.md, "Search"): words, phrases, negation,
substrings, Unicode, metadata values, states, scope isolation, limits, pages."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from tests.conftest import ApiClient, create_scope, error_of
from tests.lifecycle.helpers import close, note, purge
from tests.search.helpers import capture, found, search

pytestmark = pytest.mark.django_db

CORPUS = {
    "fox": "The quick brown fox jumps over the lazy dog",
    "reversed": "fox quick, said the dog",
    "secret": "deploy with key=sk_live_4fAB9xYZ77 before noon",
    "alpha": "alpha release notes",
    "beta": "beta release notes",
    "accents": "Réunion à l'école, café crème",
    "cjk": "会議は東京タワーで行います",
    "emoji": "ship it 🚀🔥 tonight",
}


def wait_until(moment: datetime) -> None:
    time.sleep(max(0.0, (moment - timezone.now()).total_seconds()) + 0.01)


@pytest.fixture
def corpus(api: ApiClient, scope_id: str) -> str:
    for source_id, content in CORPUS.items():
        capture(api, scope_id, source_id, content)
    capture(api, scope_id, "tagged", "plain body", {"ticket": "JIRA-4242 urgent"})
    return scope_id


@pytest.mark.parametrize(
    ("q", "params", "expected"),
    [
        ("fox", {}, {"fox", "reversed"}),
        ('"quick brown fox"', {}, {"fox"}),
        ('"quick fox"', {}, set()),
        ("fox -lazy", {}, {"reversed"}),
        ("alpha or beta", {}, {"alpha", "beta"}),
        ("release -beta", {}, {"alpha"}),
        ("FOX DOG", {}, {"fox", "reversed"}),
        ("café", {}, {"accents"}),
        ("école", {}, {"accents"}),
        ("jira", {}, {"tagged"}),
        ("urgent", {}, {"tagged"}),
        ("ticket", {}, set()),  # metadata keys are not searched
        # Words shorter than a trigram: whole words, ASCII or not.
        ("it", {}, {"emoji"}),
        ("it dog", {}, set()),
        ("l or tonight", {}, {"accents", "emoji"}),
        ("à", {}, {"accents"}),
        ("4fAB9x", {"match": "substring"}, {"secret"}),
        ("SK_LIVE_4F", {"match": "substring"}, {"secret"}),
        ("_live_", {"match": "substring"}, {"secret"}),
        ("y=sk", {"match": "substring"}, {"secret"}),
        ("%_l", {"match": "substring"}, set()),  # LIKE wildcards are literal
        ("ÉCOLE", {"match": "substring"}, {"accents"}),
        ("東京タ", {"match": "substring"}, {"cjk"}),
        ("🚀🔥 t", {"match": "substring"}, {"emoji"}),
        ("IRA-42", {"match": "substring"}, {"tagged"}),
        ("ick bro", {"match": "substring"}, {"fox"}),
    ],
)
def test_query_finds_exactly_the_matching_sources(
    api: ApiClient, corpus: str, q: str, params: dict[str, str], expected: set[str]
) -> None:
    assert set(found(api, corpus, q, **params)) == expected


def test_an_item_reports_the_source_and_a_snippet_around_the_match(
    api: ApiClient, scope_id: str
) -> None:
    content = "x" * 5000 + " needle in the haystack " + "y" * 5000
    capture(api, scope_id, "big", content)

    response = search(api, scope_id, "needle")

    assert response.status_code == 200
    (item,) = response.json()["items"]
    assert {k: v for k, v in item.items() if k not in {"snippet", "rank"}} == {
        "source_type": "content",
        "source_id": "big",
        "position": 1,
        "is_working_note": False,
        "session_id": None,
        "state": "active",
    }
    assert "needle in the haystack" in item["snippet"]
    assert len(item["snippet"].encode()) <= 256
    assert item["rank"] > 0
    assert response.json()["next_cursor"] is None


def test_a_multibyte_snippet_is_cut_at_a_character_boundary(
    api: ApiClient, scope_id: str
) -> None:
    capture(api, scope_id, "wide", "東京 " + "語" * 400)

    (item,) = search(api, scope_id, "東京").json()["items"]

    assert item["snippet"].startswith("東京 語")
    assert 250 <= len(item["snippet"].encode()) <= 256


def test_notes_are_found_in_every_state_but_a_tombstone(
    api: ApiClient, scope_id: str
) -> None:
    soon = timezone.now() + timedelta(seconds=1)
    note(api, scope_id, "wn-active", content="marker active", session_id="s-open")
    note(api, scope_id, "wn-closed", content="marker closed", session_id="s-shut")
    note(api, scope_id, "wn-expired", content="marker expired", expires_at=soon)
    capture(api, scope_id, "plain", "marker plain")
    close(api, scope_id, "s-shut")
    wait_until(soon)

    items = search(api, scope_id, "marker").json()["items"]

    states = {item["source_id"]: item["state"] for item in items}
    assert states == {
        "wn-active": "active",
        "wn-closed": "closed",
        "wn-expired": "expired",
        "plain": "active",
    }
    notes = {i["source_id"]: i["session_id"] for i in items if i["is_working_note"]}
    assert notes == {
        "wn-active": "s-open",
        "wn-closed": "s-shut",
        "wn-expired": "sess-1",
    }
    assert found(api, scope_id, "marker", working_note="true") == [
        i["source_id"] for i in items if i["is_working_note"]
    ]
    assert found(api, scope_id, "marker", working_note="false") == ["plain"]
    assert found(api, scope_id, "marker", session_id="s-shut") == ["wn-closed"]


def test_purged_sources_are_no_longer_found(api: ApiClient, scope_id: str) -> None:
    past = timezone.now() + timedelta(seconds=1)
    note(api, scope_id, "wn-1", content="ephemeral token abc123", expires_at=past)
    capture(api, scope_id, "kept", "durable token abc123")
    wait_until(past)

    assert purge(api, scope_id).status_code == 200

    assert found(api, scope_id, "token") == ["kept"]
    assert found(api, scope_id, "abc123", match="substring") == ["kept"]


def test_another_scopes_viewer_is_refused_and_no_result_crosses_scopes(
    api: ApiClient, scope_id: str, client_for: Callable[..., ApiClient]
) -> None:
    other = create_scope(api, "other")
    capture(api, scope_id, "mine", "shared phrase here")
    capture(api, other, "theirs", "shared phrase here")
    outsider = client_for(f"{other}:viewer")

    refused = search(outsider, scope_id, "shared")

    assert refused.status_code == 403
    assert error_of(refused)["code"] == "forbidden"
    assert found(outsider, other, "shared") == ["theirs"]
    assert found(api, scope_id, "shared", match="substring") == ["mine"]


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"q": ""}, "empty"),
        ({"q": "   "}, "empty"),
        ({"q": "ab", "match": "substring"}, "too_short"),
        ({"q": "x" * 257}, "too_long"),
        ({"q": "-fox"}, "no_words"),
        ({"q": "fox or -dog"}, "no_words"),
        ({"q": "🚀"}, "no_words"),
    ],
)
def test_a_query_that_cannot_be_searched_is_422(
    api: ApiClient, scope_id: str, params: dict[str, str], reason: str
) -> None:
    q = params.pop("q")

    response = search(api, scope_id, q, **params)

    assert response.status_code == 422
    error = error_of(response)
    assert (error["code"], error["details"]["reason"]) == ("invalid_request", reason)
    assert error["details"]["field"] == "q"


@pytest.mark.parametrize(
    "params",
    [{"match": "regex"}, {"limit": "0"}, {"limit": "101"}, {"page": "2"}],
)
def test_bad_parameters_are_422(
    api: ApiClient, scope_id: str, params: dict[str, str]
) -> None:
    response = search(api, scope_id, "fox", **params)

    assert response.status_code == 422
    assert error_of(response)["code"] == "invalid_request"


def test_a_missing_scope_is_404(api: ApiClient) -> None:
    response = search(api, "scp_missing", "fox")

    assert response.status_code == 404
    assert error_of(response)["code"] == "scope_not_found"


def test_pages_walk_every_match_once_best_first(api: ApiClient, scope_id: str) -> None:
    for index in range(7):
        capture(api, scope_id, f"s{index}", "word " + "filler " * index)
    items, cursor = [], None
    while True:
        params = {"limit": "3"} if cursor is None else {"limit": "3", "cursor": cursor}
        body = search(api, scope_id, "word", **params).json()
        items += body["items"]
        cursor = body["next_cursor"]
        if cursor is None:
            break

    keys = [(item["rank"], item["position"]) for item in items]
    assert sorted(keys, reverse=True) == keys
    assert sorted(item["source_id"] for item in items) == [f"s{i}" for i in range(7)]


def test_a_cursor_is_bound_to_its_query(api: ApiClient, scope_id: str) -> None:
    for index in range(3):
        capture(api, scope_id, f"s{index}", f"word {index}")
    cursor = search(api, scope_id, "word", limit="1").json()["next_cursor"]

    response = search(api, scope_id, "other", limit="1", cursor=cursor)

    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_cursor"


ODD_QUERIES = [
    '"',
    '"""',
    'a"b',
    "*",
    "NEAR(fox dog)",
    "fox AND",
    "OR",
    "or or or",
    "-",
    "( )",
    "body:fox",
    "^fox",
    "fox'dog",
    "\\\\\\",
    "%%%",
    "___",
    "e\u0301cole",
    "fox - dog",
    '-"" fox',
    "fox or",
]


@pytest.mark.parametrize("match", ["words", "substring"])
@pytest.mark.parametrize("q", ODD_QUERIES)
def test_odd_queries_answer_a_page_or_422_never_an_error(
    api: ApiClient, corpus: str, q: str, match: str
) -> None:
    response = search(api, corpus, q, match=match)

    assert response.status_code in {200, 422}, response.content
    assert ("items" in response.json()) is (response.status_code == 200)


@pytest.mark.postgres
def test_a_search_over_its_time_budget_is_422_too_broad(
    api: ApiClient, scope_id: str, settings: Any
) -> None:
    for index in range(30):
        capture(api, scope_id, f"big-{index}", f"common {index} " + "lorem " * 25_000)
    settings.POWERCONTEXT_SEARCH_TIMEOUT_MS = 1

    response = search(api, scope_id, "orem lor", match="substring")

    assert response.status_code == 422
    error = error_of(response)
    assert (error["details"]["reason"], error["details"]["timeout_ms"]) == (
        "too_broad",
        1,
    )
    settings.POWERCONTEXT_SEARCH_TIMEOUT_MS = 60_000
    assert len(found(api, scope_id, "orem lor", match="substring")) == 30


def test_a_refused_query_is_422_before_the_grant_is_checked(
    api: ApiClient, scope_id: str, client_for: Callable[..., ApiClient]
) -> None:
    """The query text is an input: checked with the others, before the grant."""
    other = create_scope(api, "other")
    outsider = client_for(f"{other}:viewer")

    empty = search(outsider, scope_id, "  ")
    short = search(outsider, scope_id, "ab", match="substring")
    envelopes = outsider.get(f"/v1/scopes/{scope_id}/search/envelopes?q=+")

    assert [empty.status_code, short.status_code, envelopes.status_code] == [422] * 3
    assert error_of(empty)["code"] == "invalid_request"
    assert search(outsider, scope_id, "words").status_code == 403
