"""One search index on PostgreSQL: words queries go through the trigram index.

``sources.0012_search`` built two GIN indexes over the searched text, a ``simple``
tsvector for ``match=words`` and ``gin_trgm_ops`` for ``match=substring``. Every
capture's INSERT filled both: the tsvector index cost about as much per new Source
as the trigram index over the same text (the text parsed once more, its words
added to a second index). A Source that matches a words query contains each of
the query's words as a run of its lowercased text, so the trigram index finds the
candidates and the tsvector match, computed for those rows, decides
(``sources.search.words_prefilter``). This migration drops the words index.

Not atomic: the index is dropped ``CONCURRENTLY`` (it waits for the transactions
using it, and blocks no capture); going back builds it again ``CONCURRENTLY``.
SQLite keeps its two FTS5 tables: nothing changes there.
"""

from django.db import migrations

WORDS_INDEX = (
    "CREATE INDEX CONCURRENTLY sources_source_words_idx ON sources_contentsource "
    "USING gin (to_tsvector('simple'::regconfig, "
    "sources_search_text(content, metadata))) WHERE purged_at IS NULL"
)
DROP_WORDS_INDEX = "DROP INDEX CONCURRENTLY IF EXISTS sources_source_words_idx"


def forward(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP_WORDS_INDEX, params=None)


def backward(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        # A build that failed half-way leaves an INVALID index of the same name.
        schema_editor.execute(DROP_WORDS_INDEX, params=None)
        schema_editor.execute(WORDS_INDEX, params=None)


class Migration(migrations.Migration):
    # DROP and CREATE INDEX CONCURRENTLY cannot run in a transaction.
    atomic = False

    dependencies = [("sources", "0013_search_text_plpgsql")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
