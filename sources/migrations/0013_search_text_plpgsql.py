"""``sources_search_text`` in PL/pgSQL, with the same results (PostgreSQL only).

The search indexes of ``0012_search`` are expression indexes over this function, so
every capture's INSERT evaluates it twice (once per index). As a SQL function whose
body has a FROM clause and an aggregate it cannot be inlined, and PostgreSQL parses
and plans such a body again in every statement that calls it: with one INSERT per
capture, that planning was most of what the indexes cost a capture. A PL/pgSQL
function keeps its plans for the session, and a Source whose content is one JSON
string (every working note, most Sources) skips the JSON path walk of the content.

The results are the same for every input, so the indexes built over the SQL body stay
valid and are not rebuilt: the content's strings and numbers in document order, then
the metadata's, one per line, and NULL when there are none
(``tests/search/test_search_text_function.py`` compares the two bodies). It stays
``PARALLEL RESTRICTED``, as decision 0043 chose: no parallel plan for a search.
"""

from django.db import migrations

PLPGSQL = r"""
CREATE OR REPLACE FUNCTION sources_search_text(content text, metadata jsonb)
RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL RESTRICTED AS $$
DECLARE
    document jsonb := content::jsonb;
    parts text[];
BEGIN
    IF jsonb_typeof(document) = 'string' THEN
        parts := ARRAY[document #>> '{}'];
    ELSE
        parts := ARRAY(
            SELECT v #>> '{}' FROM jsonb_path_query(document, 'strict $.**') AS v
            WHERE jsonb_typeof(v) IN ('string', 'number')
        );
    END IF;
    IF metadata IS NOT NULL AND metadata <> '{}'::jsonb THEN
        parts := parts || ARRAY(
            SELECT v #>> '{}' FROM jsonb_path_query(metadata, 'strict $.**') AS v
            WHERE jsonb_typeof(v) IN ('string', 'number')
        );
    END IF;
    IF cardinality(parts) = 0 THEN
        RETURN NULL;
    END IF;
    RETURN array_to_string(parts, E'\n');
END
$$
"""

# The body of 0012_search, for going back.
SQL = r"""
CREATE OR REPLACE FUNCTION sources_search_text(content text, metadata jsonb)
RETURNS text LANGUAGE sql IMMUTABLE PARALLEL RESTRICTED AS $$
SELECT string_agg(v #>> '{}', E'\n') FROM (
    SELECT jsonb_path_query(content::jsonb, 'strict $.**') AS v
    UNION ALL
    SELECT jsonb_path_query(coalesce(metadata, '{}'::jsonb), 'strict $.**')
) AS t WHERE jsonb_typeof(v) IN ('string', 'number')
$$
"""


def forward(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(PLPGSQL, params=None)


def backward(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(SQL, params=None)


class Migration(migrations.Migration):
    dependencies = [("sources", "0012_search")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
