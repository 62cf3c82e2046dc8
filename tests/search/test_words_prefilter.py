"""Words queries on PostgreSQL go through the trigram index (docs/api.md, "Search").

PostgreSQL has one search index, over trigrams. A words query is narrowed to the
Sources holding its words (``sources.search.words_prefilter`` reads PostgreSQL's own
parse of ``q``), then the ``simple`` tsvector match decides. The narrowing must never
drop a Source the tsvector match would find: Hypothesis captures documents built from
words that stress both parsers (short words, signs, hyphens, accents, CJK, emoji,
underscores, quotes, backslashes) and compares what the API finds with the tsvector
match over the whole scope.
"""

from __future__ import annotations

import os
from itertools import count

import pytest
from django.db import connection
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sources.filters import SearchFilters
from sources.search import (
    ANYTHING,
    NOTHING,
    AllOf,
    AnyOf,
    Lexeme,
    Match,
    SearchQuery,
    words_prefilter,
)
from sources.selectors.search import _statement
from tests.conftest import ApiClient
from tests.search.helpers import capture, search

EXAMPLES = int(os.environ.get("POWERCONTEXT_PROPERTY_EXAMPLES", "200"))


@pytest.mark.parametrize(
    ("tree", "expected"),
    [
        ("'fox'", Lexeme("fox")),
        ("'fox' & 'dog'", AllOf((Lexeme("fox"), Lexeme("dog")))),
        (
            "'quick' <-> 'brown' <2> 'fox'",
            AllOf(tuple(map(Lexeme, ("quick", "brown", "fox")))),
        ),
        ("'a' & 'b' | 'c'", AnyOf((AllOf((Lexeme("a"), Lexeme("b"))), Lexeme("c")))),
        (
            "'a' & ( 'b' | 'c' )",
            AllOf((Lexeme("a"), AnyOf((Lexeme("b"), Lexeme("c"))))),
        ),
        ("'fox' & !'lazy'", AllOf((Lexeme("fox"), ANYTHING))),
        ("!( 'a' & 'b' )", ANYTHING),
        ("'c''est' & 'back\\\\slash'", AllOf((Lexeme("c'est"), Lexeme("back\\slash")))),
        ("'pre':* & 'w':AB", AllOf((Lexeme("pre"), Lexeme("w")))),
        ("'-4242' & 'jira'", AllOf((Lexeme("-4242"), Lexeme("jira")))),
        ("T", ANYTHING),
        ("", NOTHING),
        ("'fox' &", ANYTHING),  # unreadable: the tsvector match alone decides
        ("( 'fox'", ANYTHING),
        ("'fox' ? 'dog'", ANYTHING),
    ],
)
def test_the_parsed_query_is_read_into_the_words_a_match_contains(
    tree: str, expected: object
) -> None:
    assert words_prefilter(tree) == expected


@pytest.mark.postgres
@pytest.mark.django_db
def test_postgresql_keeps_one_search_index() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes "
            "WHERE tablename = 'sources_contentsource' AND indexdef LIKE '%%search_text%%'"
        )
        assert [row[0] for row in cursor.fetchall()] == ["sources_source_trigram_idx"]


@pytest.mark.postgres
@pytest.mark.django_db
@pytest.mark.parametrize(
    ("q", "conditions", "absent"),
    [
        ("needle", ["~~* '%needle%'"], []),
        (
            '"needle haystack" or go',
            ["~~* '%needle%'", "~~* '%haystack%'", "'go'::text <<%"],
            [],
        ),
        ("3.14 or 1.2.3", ["'3.14'::text <<%", "'1.2.3'::text <<%"], ["~~*"]),
        # An excluded word narrows nothing: a match does not contain it.
        ("needle -haystack", ["~~* '%needle%'"], ["haystack%'"]),
        # A short word that is not ASCII cannot be looked up by trigrams.
        ("à", [], ["~~*", "<<%"]),
    ],
)
def test_a_words_query_is_narrowed_by_conditions_the_trigram_index_answers(
    api: ApiClient, scope_id: str, q: str, conditions: list[str], absent: list[str]
) -> None:
    """The statement the API runs asks the searched text for the query's words -
    ``ILIKE`` a word, or ``<<%`` a short word, both operators of ``gin_trgm_ops`` -
    so the planner can take the trigram index; which one it takes on a table this
    small is its choice (bench/search.py measures a million Sources)."""
    capture(api, scope_id, "one", "a needle in the haystack, go")
    sql, params = _statement(
        scope_id, SearchQuery.of(q, Match.WORDS), SearchFilters(), None, 10
    )
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert all(condition in plan for condition in conditions), plan
    assert not any(condition in plan for condition in absent), plan


WORDS = [
    "go",
    "a",
    "it",
    "s",
    "ok",
    "fox",
    "foxes",
    "dog",
    "-5",
    "5",
    "42",
    "3.14",
    "go-lang",
    "jira-4242",
    "sk_live_4f",
    "l'école",
    "école",
    "café",
    "crème",
    "é",
    "à",
    "ß",
    "İstanbul",
    "ǅemal",
    "中文",
    "東京タワー",
    "会議",
    "🚀",
    "ship🚀it",
    "it's",
    "back\\slash",
    "100%",
    "a_b",
    "x@y.io",
    "http://x.io/ab",
    "Ωmega",
    "naïve",
    "e\u0301t\u00e9",
    "ID",
    "Go",
    "GO!",
    "v1.2.3",
    "_",
    "'quoted'",
    "1.2.3",
    "10.0.0.1",
    "2026-12-06",
    "-42",
    "x/ab",
    "/ab",
    "1.1",
    "3.14159",
]
DOCUMENT = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
TERM = st.sampled_from(WORDS) | st.lists(
    st.sampled_from(WORDS), min_size=2, max_size=3
).map(lambda words: '"' + " ".join(words) + '"')
QUERY = st.lists(
    st.tuples(st.sampled_from(["", "", "-", "or "]), TERM), min_size=1, max_size=4
).map(lambda terms: " ".join(sign + term for sign, term in terms))
_ids = count()


def tsvector_matches(scope_id: str, q: str) -> set[str]:
    """The exact answer: the tsvector match over every Source of the scope."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.source_id FROM sources_contentsource s, "
            "websearch_to_tsquery('simple'::regconfig, %s) AS q "
            "WHERE s.scope_id = %s AND s.purged_at IS NULL AND "
            "to_tsvector('simple'::regconfig, sources_search_text(s.content, s.metadata)) @@ q",
            [q, scope_id],
        )
        return {row[0] for row in cursor.fetchall()}


def api_matches(api: ApiClient, scope_id: str, q: str) -> set[str] | None:
    """Every Source the API finds for ``q``, over all pages; None when refused."""
    found: set[str] = set()
    cursor: str | None = None
    while True:
        params = {"limit": 100} | ({"cursor": cursor} if cursor else {})
        response = search(api, scope_id, q, **params)
        if response.status_code == 422:
            return None
        assert response.status_code == 200, response.content
        body = response.json()
        found |= {item["source_id"] for item in body["items"]}
        cursor = body["next_cursor"]
        if cursor is None:
            return found


@pytest.mark.postgres
@pytest.mark.django_db
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(documents=st.lists(DOCUMENT, min_size=1, max_size=5), q=QUERY)
@example(documents=["a go-lang dog", "gogo"], q="go")
@example(documents=["ticket JIRA-4242 -5 ok"], q="-5 or jira")
@example(documents=["é à ß", "ǅemal İstanbul"], q='"é à" or ǆemal')
@example(documents=["l'école it's", "back\\slash 100%"], q="école s or back")
def test_the_trigram_narrowing_never_drops_a_match(
    api: ApiClient, scope_id: str, documents: list[str], q: str
) -> None:
    for document in documents:
        capture(api, scope_id, f"doc-{next(_ids)}", document)
    found = api_matches(api, scope_id, q)
    if found is not None:
        assert found == tsvector_matches(scope_id, q)
