"""``sources_search_text`` in PL/pgSQL gives what the SQL body of ``0012_search`` gave,
in time linear in the values it walks.

The search indexes are expression indexes over the function, built (on an existing
database) with the SQL body; migrations ``sources.0013_search_text_plpgsql`` and
``sources.0015_search_text_linear_walk`` replaced the body without rebuilding them. That is only sound if the two bodies agree on every
input - otherwise a Source indexed under one text would be looked up under another and
never found, or a purge's index clean-up would miss its entries. Hypothesis feeds both
the same content and metadata (nested objects and arrays, numbers of every kind,
empty strings, odd Unicode, JSON ``null``, SQL ``NULL``) and compares the results.
"""

from __future__ import annotations

import importlib
import json
import os
import time
from typing import Any

import pytest
from django.db import connection
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

EXAMPLES = int(os.environ.get("POWERCONTEXT_PROPERTY_EXAMPLES", "200"))

# The SQL body of 0012_search, as 0013 keeps it for going back, under a session-only
# name: the function the test compares against is the one a rollback would restore.
SQL_FUNCTION = importlib.import_module(
    "sources.migrations.0013_search_text_plpgsql"
).SQL.replace(
    "FUNCTION sources_search_text(", "FUNCTION pg_temp.sources_search_text_sql(", 1
)

TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"))
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4)
    ),
    max_leaves=12,
)
METADATA = st.none() | st.dictionaries(TEXT, VALUES, max_size=4)


def both_bodies(content: Any, metadata: dict[str, Any] | None) -> tuple[Any, Any]:
    params = {
        # The registry stores content as JSON text and metadata as jsonb.
        "content": json.dumps(content),
        "metadata": None if metadata is None else json.dumps(metadata),
    }
    with connection.cursor() as cursor:
        cursor.execute(SQL_FUNCTION)
        cursor.execute(
            "SELECT sources_search_text(%(content)s, %(metadata)s::jsonb), "
            "pg_temp.sources_search_text_sql(%(content)s, %(metadata)s::jsonb)",
            params,
        )
        function_text, sql_text = cursor.fetchone()
    return function_text, sql_text


def test_the_function_is_the_session_cached_plpgsql_body() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang "
            "WHERE p.proname = 'sources_search_text'"
        )
        assert cursor.fetchall() == [("plpgsql",)]


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(content=VALUES, metadata=METADATA)
@example(content="a note", metadata=None)
@example(content="a note", metadata={})
@example(content="", metadata={"k": ""})
@example(content={"a": ["x", 1, 2.5, None, True]}, metadata={"n": [{"m": "deep"}]})
@example(content=[], metadata={"only": "metadata"})
@example(content=None, metadata={})
@example(content=1e20, metadata={"f": -0.0})
@example(content="line\nbreak é 漢字 🙂", metadata={"z": "\u200b"})
@example(
    content=[[[["in"], "order"], 3], {"b": 1, "a": [2, {"c": "x"}]}], metadata=None
)
def test_the_plpgsql_body_gives_what_the_sql_body_gave(
    content: Any, metadata: dict[str, Any] | None
) -> None:
    function_text, sql_text = both_bodies(content, metadata)
    assert function_text == sql_text


def test_the_function_stays_parallel_restricted() -> None:
    """Decision 0043: a parallel plan's start-up dwarfed the index scan."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT proparallel, provolatile FROM pg_proc "
            "WHERE proname = 'sources_search_text'"
        )
        assert cursor.fetchall() == [("r", "i")]


def test_the_walk_takes_time_in_proportion_to_the_values() -> None:
    """Eight times the values take about eight times as long. The body of ``0013``
    read them through the set-returning ``jsonb_path_query``, whose time grows with
    the square of what it returns: 64 times as long, 2.4 s for 175,000 numbers."""

    def seconds(count: int) -> float:
        content = "[" + ",".join(["0"] * count) + "]"
        fastest = float("inf")
        with connection.cursor() as cursor:
            for _ in range(3):
                started = time.perf_counter()
                cursor.execute(
                    "SELECT length(sources_search_text(%s, NULL))", [content]
                )
                assert cursor.fetchone() == (2 * count - 1,)
                fastest = min(fastest, time.perf_counter() - started)
        return fastest

    small, large = seconds(20_000), seconds(160_000)

    assert large < 24 * small, f"{small * 1000:.1f} ms, then {large * 1000:.1f} ms"
