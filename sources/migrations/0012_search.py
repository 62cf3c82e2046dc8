"""Search indexes over the Sources' text (docs/operations.md, "Search indexes").

PostgreSQL: ``pg_trgm``; the immutable function ``sources_search_text`` (every
string and number of a Source's content and metadata, one per line); a GIN index
on its ``simple`` tsvector (``match=words``) and a ``gin_trgm_ops`` GIN index on
it (``match=substring``), both partial on ``purged_at IS NULL``, so a tombstone
has no entry. Expression indexes are kept up to date by the capture's own INSERT
statement, in its transaction; the capture path is unchanged. They are built
``CONCURRENTLY`` (this migration is not atomic): captures go on while they build.

SQLite: two FTS5 tables (``unicode61`` words and ``trigram`` substrings) fed by
triggers on the Source table, in the writing transaction; the tombstone's UPDATE
deletes the text from both. Needs SQLite 3.34 or later (the trigram tokenizer).
"""

from django.db import migrations

# PARALLEL RESTRICTED: every search filters on this function, so no parallel plan
# is chosen. PostgreSQL estimates any rare word at 0.5% of the rows (5,000 of a
# million) and would start parallel workers, which took 20-30 ms on the bench
# machine for a search that needs under 1 ms (docs/performance.md, "Search").
SEARCH_TEXT = """
CREATE OR REPLACE FUNCTION sources_search_text(content text, metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL RESTRICTED AS $$
SELECT string_agg(v #>> '{}', E'\\n') FROM (
    SELECT jsonb_path_query(content::jsonb, 'strict $.**') AS v
    UNION ALL
    SELECT jsonb_path_query(coalesce(metadata, '{}'::jsonb), 'strict $.**')
) AS t WHERE jsonb_typeof(v) IN ('string', 'number')
$$
"""
WORDS_INDEX = (
    "CREATE INDEX CONCURRENTLY sources_source_words_idx ON sources_contentsource "
    "USING gin (to_tsvector('simple'::regconfig, "
    "sources_search_text(content, metadata))) WHERE purged_at IS NULL"
)
TRIGRAM_INDEX = (
    "CREATE INDEX CONCURRENTLY sources_source_trigram_idx ON sources_contentsource "
    "USING gin (sources_search_text(content, metadata) gin_trgm_ops) "
    "WHERE purged_at IS NULL"
)
POSTGRES_FORWARD = (
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    SEARCH_TEXT,
    # A build that failed half-way leaves an INVALID index of the same name.
    "DROP INDEX CONCURRENTLY IF EXISTS sources_source_words_idx",
    WORDS_INDEX,
    "DROP INDEX CONCURRENTLY IF EXISTS sources_source_trigram_idx",
    TRIGRAM_INDEX,
)
POSTGRES_BACKWARD = (
    "DROP INDEX CONCURRENTLY IF EXISTS sources_source_trigram_idx",
    "DROP INDEX CONCURRENTLY IF EXISTS sources_source_words_idx",
    "DROP FUNCTION IF EXISTS sources_search_text(text, jsonb)",
)

# The same text on SQLite: strings and numbers of content, then of metadata.
SQLITE_TEXT = """(
    SELECT group_concat(value, char(10)) FROM (
        SELECT value FROM json_tree(NEW.content)
        WHERE type IN ('text', 'integer', 'real')
        UNION ALL
        SELECT value FROM json_tree(coalesce(NEW.metadata, '{}'))
        WHERE type IN ('text', 'integer', 'real')
    )
)"""
SQLITE_TABLES = {
    "sources_search_words": "tokenize = 'unicode61 remove_diacritics 0'",
    "sources_search_trigram": "tokenize = 'trigram case_sensitive 0'",
}


def _sqlite_forward() -> list[str]:
    statements = [
        f"CREATE VIRTUAL TABLE {table} USING fts5(body, {options})"
        for table, options in SQLITE_TABLES.items()
    ]
    insert = "".join(
        f"INSERT INTO {table} (rowid, body) VALUES (NEW.id, {SQLITE_TEXT}); "
        for table in SQLITE_TABLES
    )
    delete = "".join(
        f"DELETE FROM {table} WHERE rowid = OLD.id; " for table in SQLITE_TABLES
    )
    statements += [
        "CREATE TRIGGER sources_search_insert AFTER INSERT ON sources_contentsource "
        f"WHEN NEW.content IS NOT NULL BEGIN {insert}END",
        # The tombstone (purge, redaction) takes the text out of both tables.
        "CREATE TRIGGER sources_search_tombstone AFTER UPDATE OF content "
        "ON sources_contentsource WHEN NEW.content IS NULL "
        f"BEGIN {delete}END",
        "CREATE TRIGGER sources_search_delete AFTER DELETE ON sources_contentsource "
        f"BEGIN {delete}END",
    ]
    backfill = SQLITE_TEXT.replace("NEW.", "s.")
    statements += [
        f"INSERT INTO {table} (rowid, body) SELECT s.id, {backfill} "
        "FROM sources_contentsource s WHERE s.content IS NOT NULL"
        for table in SQLITE_TABLES
    ]
    return statements


SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS sources_search_insert",
    "DROP TRIGGER IF EXISTS sources_search_tombstone",
    "DROP TRIGGER IF EXISTS sources_search_delete",
    *(f"DROP TABLE IF EXISTS {table}" for table in SQLITE_TABLES),
]


def forward(apps, schema_editor):  # type: ignore[no-untyped-def]
    vendor = schema_editor.connection.vendor
    statements = {
        "postgresql": POSTGRES_FORWARD,
        "sqlite": _sqlite_forward(),
    }.get(vendor, ())
    for statement in statements:
        schema_editor.execute(statement, params=None)


def backward(apps, schema_editor):  # type: ignore[no-untyped-def]
    vendor = schema_editor.connection.vendor
    statements = {"postgresql": POSTGRES_BACKWARD, "sqlite": SQLITE_BACKWARD}.get(
        vendor, ()
    )
    for statement in statements:
        schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    # CREATE INDEX CONCURRENTLY cannot run in a transaction.
    atomic = False

    dependencies = [("sources", "0011_memory_records")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
