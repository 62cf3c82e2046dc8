"""Search of the live working notes of a scope's envelopes (a selector).

So that an erasure can find every copy of a text: the notes an envelope holds
now, matched like Sources (``sources.search``). Revisions are not searched; a
redaction erases a text from them through the Source it was captured as
(``lifecycle.services.redaction``).

PostgreSQL reads the scope's envelopes that hold notes (their identity index
leads with the scope) and matches the text in the query, with no index of its
own: envelopes are written on every session write, and a scope holds far fewer
of them than Sources. SQLite reads the FTS5 tables the envelope triggers keep
(migration ``sessions_app.0007_notes_search``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection

from powercontext.pages import Page, Position, keyset_page
from sources.search import (
    SNIPPET_BEFORE,
    SNIPPET_CHARS,
    Match,
    SearchQuery,
    like_pattern,
    snippet_cut,
)
from sources.selectors import scope_require
from sources.selectors.search import bounded_fetch

from .meta_keys import WORKING_NOTES_KEY
from .models import SessionEnvelope

_ENVELOPE = SessionEnvelope._meta.db_table
_SQLITE_TABLES = {
    Match.WORDS: "sessions_notes_words",
    Match.SUBSTRING: "sessions_notes_trigram",
}


@dataclass(frozen=True)
class NotesHit:
    session_id: str
    version: int
    snippet: str


def envelope_notes_search(
    *, scope_id: str, query: SearchQuery, position: Position | None, limit: int
) -> Page[NotesHit]:
    """A page of the scope's envelopes whose live notes match ``query``, by
    session id. One query; one more for an empty page (``ScopeNotFound``)."""
    params: dict[str, Any] = {
        "scope_id": scope_id,
        "term": query.first_term.lower(),
        "limit": limit + 1,
        "after": "" if position is None else str(position["after"]),
    }
    if connection.vendor == "postgresql":
        sql = _postgres(query, params)
    else:
        sql = _sqlite(query, params)
    _, rows = bounded_fetch(sql, params)
    if not rows:
        scope_require(scope_id=scope_id)
    hits = [NotesHit(row[0], int(row[1]), snippet_cut(row[2])) for row in rows]
    return keyset_page(hits, limit, lambda hit: {"after": hit.session_id})


def _snippet(text: str, find: str, greatest: str) -> str:
    return (
        f"substr({text}, {greatest}({find}(lower({text}), %(term)s) "
        f"- {SNIPPET_BEFORE}, 1), {SNIPPET_CHARS})"
    )


def _postgres(query: SearchQuery, params: dict[str, Any]) -> str:
    params["q"] = query.text
    params["key"] = WORKING_NOTES_KEY
    if query.match is Match.WORDS:
        matches = (
            "to_tsvector('simple'::regconfig, e.notes) "
            "@@ websearch_to_tsquery('simple'::regconfig, %(q)s)"
        )
    else:
        params["pattern"] = like_pattern(query.text)
        matches = "e.notes ILIKE %(pattern)s"
    return f"""
SELECT e.session_id, e.version, {_snippet("e.notes", "strpos", "greatest")}
FROM (
    SELECT session_id, version, meta ->> %(key)s AS notes FROM {_ENVELOPE}
    WHERE scope_id = %(scope_id)s AND session_id > %(after)s
) AS e
WHERE e.notes IS NOT NULL AND {matches}
ORDER BY e.session_id LIMIT %(limit)s"""


def _sqlite(query: SearchQuery, params: dict[str, Any]) -> str:
    table = _SQLITE_TABLES[query.match]
    params["fts"] = query.fts5()
    return f"""
SELECT e.session_id, e.version, {_snippet("f.body", "instr", "max")}
FROM {table} f JOIN {_ENVELOPE} e ON e.id = f.rowid
WHERE {table} MATCH %(fts)s AND e.scope_id = %(scope_id)s
  AND e.session_id > %(after)s
ORDER BY e.session_id LIMIT %(limit)s"""
