"""Search of a scope's Sources by their text (``sources.search`` for the query).

Reads the primary (never the replica): a Source is found as soon as its capture
was answered. Tombstones have no text and no index entry; every other state is
found and reported.

Order: ``rank`` descending, then ``position`` descending; the keyset is that pair.
A rank depends only on the query and the Source's own text - never on other
Sources - so a walk's pages neither repeat nor skip a Source while captures go on
(a new match ranks wherever it ranks; it is on a later page or was passed).

- PostgreSQL, words: ``ts_rank`` of the ``simple`` tsvector, over the Sources the
  trigram index finds holding the query's words (``_words_prefilter``);
- otherwise (substring; SQLite words, where FTS5's ``bm25`` depends on the whole
  table): the query's share of the searched text, ``len(q) / len(text)``.

Both are rounded to 6 decimals so the cursor carries the exact key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.db.models.expressions import RawSQL
from django.utils.dateparse import parse_datetime
from django.utils.timezone import is_aware, make_aware
from psycopg.errors import QueryCanceled

from powercontext.exceptions import InvalidRequest
from powercontext.pages import Page, Position, keyset_page

from ..availability import Availability, availability_of
from ..filters import SearchFilters
from ..models import ContentSource, SessionClosure
from ..search import (
    SNIPPET_BEFORE,
    SNIPPET_CHARS,
    SUBSTRING_MIN_LENGTH,
    AllOf,
    Lexeme,
    Match,
    Prefilter,
    SearchQuery,
    like_pattern,
    snippet_cut,
    words_prefilter,
)
from .scopes import scope_require

_SOURCE = ContentSource._meta.db_table
_CLOSURE = SessionClosure._meta.db_table
_POSTGRES_TEXT = "sources_search_text(s.content, s.metadata)"
_POSTGRES_VECTOR = f"to_tsvector('simple'::regconfig, {_POSTGRES_TEXT})"
# A word with no run of 3 letters or digits (``go``, ``-5``, ``3.14``, ``/ab``)
# gives ``ILIKE`` no trigram to look up, so it is looked up by its runs as whole
# words: ``<<%`` at a threshold of 1 holds when the text has consecutive words
# with exactly the query's padded trigrams ("  g", " go", "go "). Only for ASCII,
# whose letters and digits pg_trgm reads as word characters in every locale.
_SHORT_RUNS = re.compile(r"[\x21-\x7e]*[a-z0-9][\x21-\x7e]*")
_LONG_RUN = re.compile(r"[a-z0-9]{3}")
_SQLITE_TABLES = {
    Match.WORDS: "sources_search_words",
    Match.SUBSTRING: "sources_search_trigram",
}


@dataclass(frozen=True)
class SearchHit:
    """One matching Source as the search reports it."""

    source_type: str
    source_id: str
    position: int
    is_working_note: bool
    session_id: str | None
    state: Availability
    snippet: str
    rank: Decimal


def source_search(
    *,
    scope_id: str,
    query: SearchQuery,
    filters: SearchFilters,
    position: Position | None,
    limit: int,
    now: datetime,
) -> Page[SearchHit]:
    """A page of the scope's Sources whose text matches ``query``, best first.

    One query for the page (matches, ranks, each row's session close instant and
    the snippet of the page's rows only); one more to tell a missing scope when
    the page is empty (``ScopeNotFound``).
    """
    sql, params = _statement(scope_id, query, filters, position, limit)
    columns, values = bounded_fetch(sql, params)
    rows = [dict(zip(columns, row, strict=True)) for row in values]
    if not rows:
        scope_require(scope_id=scope_id)
    hits = [_hit(row, now) for row in rows]
    return keyset_page(
        hits, limit, lambda hit: {"rank": str(hit.rank), "position": hit.position}
    )


def bounded_fetch(sql: str, params: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """The column names and rows of one search statement.

    On PostgreSQL the statement runs in a short transaction whose
    ``statement_timeout`` is ``POWERCONTEXT_SEARCH_TIMEOUT_MS``: a query matching
    most of a large scope ranks every match before it can answer a page, and is
    cancelled rather than hold a worker for seconds - ``InvalidRequest``
    (422, ``too_broad``). SQLite runs it as it is.
    """
    if connection.vendor != "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return [c[0] for c in cursor.description], cursor.fetchall()
    timeout = settings.POWERCONTEXT_SEARCH_TIMEOUT_MS
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config('statement_timeout', %s, true), "
                "set_config('pg_trgm.strict_word_similarity_threshold', '1', true)",
                [str(timeout)],
            )
            cursor.execute(sql, params)
            return [c[0] for c in cursor.description], cursor.fetchall()
    except OperationalError as error:
        if not isinstance(error.__cause__, QueryCanceled):
            raise
        raise InvalidRequest.for_field(
            "q",
            "too_broad",
            f"The search ran over {timeout} ms: it matches too much of the scope. "
            "Add words, or use a longer substring.",
            timeout_ms=timeout,
        ) from None


def _statement(
    scope_id: str,
    query: SearchQuery,
    filters: SearchFilters,
    position: Position | None,
    limit: int,
) -> tuple[str, dict[str, Any]]:
    postgres = connection.vendor == "postgresql"
    params: dict[str, Any] = {
        "scope_id": scope_id,
        "limit": limit + 1,
        "term": query.first_term.lower(),
        "length": len(query.text),
    }
    conditions = ["s.scope_id = %(scope_id)s", "s.purged_at IS NULL"]
    if filters.working_note is not None:
        conditions.append("s.is_working_note = %(working_note)s")
        params["working_note"] = filters.working_note
    if filters.session_id is not None:
        conditions.append("s.session_id = %(session_id)s")
        params["session_id"] = filters.session_id
    after = ""
    if position is not None:
        after = "WHERE (m.rank, m.position) < (%(after_rank)s, %(after_position)s)"
        params["after_rank"] = _cursor_rank(position, postgres)
        params["after_position"] = _cursor_position(position)
    matches = (
        _postgres_matches(query, conditions, params)
        if postgres
        else _sqlite_matches(query, conditions, params)
    )
    text = _POSTGRES_TEXT.replace("s.", "m.") if postgres else "m.body"
    find = "strpos" if postgres else "instr"
    greatest = "greatest" if postgres else "max"
    sql = f"""
SELECT m.source_type, m.source_id, m.position, m.is_working_note, m.session_id,
       m.expires_at, m.rank,
       (SELECT c.closed_at FROM {_CLOSURE} c
        WHERE c.scope_id = m.scope_id AND c.session_id = m.session_id) AS closed_at,
       substr({text}, {greatest}(
           {find}(lower({text}), %(term)s) - {SNIPPET_BEFORE}, 1), {SNIPPET_CHARS}
       ) AS snippet
FROM (
    SELECT * FROM ({matches}) AS m {after}
    ORDER BY m.rank DESC, m.position DESC LIMIT %(limit)s
) AS m
ORDER BY m.rank DESC, m.position DESC
"""
    return sql, params


_COLUMNS = (
    "s.scope_id, s.source_type, s.source_id, s.position, s.is_working_note, "
    "s.session_id, s.expires_at"
)


def _postgres_matches(
    query: SearchQuery, conditions: list[str], params: dict[str, Any]
) -> str:
    """The matching rows with their rank (and content, metadata for the text)."""
    params["q"] = query.text
    if query.match is Match.WORDS:
        prefilter = _prefilter_sql(_words_prefilter(query.text), params)
        narrowed = conditions if prefilter is None else [*conditions, prefilter]
        return f"""
SELECT {_COLUMNS}, s.content, s.metadata,
       round(ts_rank({_POSTGRES_VECTOR}, q)::numeric, 6) AS rank
FROM {_SOURCE} s, websearch_to_tsquery('simple'::regconfig, %(q)s) AS q
WHERE {" AND ".join(narrowed)} AND {_POSTGRES_VECTOR} @@ q"""
    params["pattern"] = like_pattern(query.text)
    return f"""
SELECT {_COLUMNS}, s.content, s.metadata,
       round(%(length)s::numeric
             / greatest(char_length({_POSTGRES_TEXT}), 1), 6) AS rank
FROM {_SOURCE} s
WHERE {" AND ".join(conditions)} AND {_POSTGRES_TEXT} ILIKE %(pattern)s"""


def _words_prefilter(text: str) -> Prefilter:
    """What PostgreSQL reads in a words query, as the words a match must contain."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT querytree(websearch_to_tsquery('simple'::regconfig, %s))::text",
            [text],
        )
        (tree,) = cursor.fetchone()
    return words_prefilter(tree)


def _prefilter_sql(prefilter: Prefilter, params: dict[str, Any]) -> str | None:
    """A condition on the searched text the trigram index can answer, binding its
    words into ``params``; None when nothing narrows the search (a negation, a
    short non-ASCII word: the tsvector match alone decides)."""
    if isinstance(prefilter, Lexeme):
        word = prefilter.text
        name = f"word_{len(params)}"
        if _SHORT_RUNS.fullmatch(word) and not _LONG_RUN.search(word):
            params[name] = word
            return f"%({name})s <<%% {_POSTGRES_TEXT}"
        if len(word) >= SUBSTRING_MIN_LENGTH:
            params[name] = like_pattern(word)
            return f"{_POSTGRES_TEXT} ILIKE %({name})s"
        return None
    parts = [_prefilter_sql(part, params) for part in prefilter.parts]
    if isinstance(prefilter, AllOf):
        narrowing = [part for part in parts if part is not None]
        return " AND ".join(narrowing) if narrowing else None
    if not parts:
        return "FALSE"
    if any(part is None for part in parts):
        return None
    return "(" + " OR ".join(part for part in parts if part is not None) + ")"


def _sqlite_matches(
    query: SearchQuery, conditions: list[str], params: dict[str, Any]
) -> str:
    """The matching rows with their rank and text, through the FTS5 table."""
    table = _SQLITE_TABLES[query.match]
    params["fts"] = query.fts5()
    return f"""
SELECT {_COLUMNS}, f.body,
       round(CAST(%(length)s AS REAL) / max(length(f.body), 1), 6) AS rank
FROM {table} f JOIN {_SOURCE} s ON s.id = f.rowid
WHERE {table} MATCH %(fts)s AND {" AND ".join(conditions)}"""


def _cursor_rank(position: Position, postgres: bool) -> Decimal | float:
    rank = Decimal(str(position["rank"]))
    return rank if postgres else float(rank)


def _cursor_position(position: Position) -> int:
    return int(position["position"])


def _hit(row: dict[str, Any], now: datetime) -> SearchHit:
    return SearchHit(
        source_type=row["source_type"],
        source_id=row["source_id"],
        position=int(row["position"]),
        is_working_note=bool(row["is_working_note"]),
        session_id=row["session_id"],
        state=availability_of(
            is_working_note=bool(row["is_working_note"]),
            expires_at=_aware(row["expires_at"]),
            closed_at=_aware(row["closed_at"]),
            purged_at=None,
            now=now,
        ),
        snippet=snippet_cut(row["snippet"]),
        rank=Decimal(str(row["rank"])),
    )


def _aware(value: Any) -> datetime | None:
    """A timestamp column as an aware datetime (SQLite answers naive UTC)."""
    if value is None:
        return None
    parsed = value if isinstance(value, datetime) else parse_datetime(value)
    if parsed is None or is_aware(parsed):
        return parsed
    return make_aware(parsed, UTC)


def text_contains(text: str) -> RawSQL:
    """The ids of Sources, in every scope, whose searched text contains ``text``
    (ignoring case) - a subquery for the audit console, through the substring
    index; tombstones never match."""
    if connection.vendor == "postgresql":
        return RawSQL(  # noqa: S611 - constant SQL, the fragment is bound
            f"SELECT s.id FROM {_SOURCE} s "
            f"WHERE s.purged_at IS NULL AND {_POSTGRES_TEXT} ILIKE %s",
            [like_pattern(text)],
        )
    return RawSQL(
        "SELECT rowid FROM sources_search_trigram "
        "WHERE sources_search_trigram MATCH %s",
        [SearchQuery(text, Match.SUBSTRING).fts5()],
    )
