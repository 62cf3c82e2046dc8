"""``sources_search_text`` walks a Source's JSON in linear time (PostgreSQL only).

The body of ``0013_search_text_plpgsql`` read the strings and numbers of a content or
metadata that is not one JSON string through the set-returning
``jsonb_path_query(document, 'strict $.**')``, and that function's time grows with the
square of the number of items it returns: a content of 175,000 numbers took 2.4 s, of
700,000 (1.4 MB, well within the largest content) 38 s of the database's CPU, once per
search index, in every capture of such a Source. ``jsonb_path_query_array`` walks the
same path in linear time (31 ms and 62 ms for 175,000 and 350,000 items), so the body
now asks it for the strings and numbers only - filtered in the path, so containers are
never copied into the result - and unnests that array in its order.

The results are the same for every input, so the index built over the earlier bodies
stays valid and is not rebuilt (``tests/search/test_search_text_function.py`` compares
this body with the SQL body of ``0012_search`` on generated values).
"""

from importlib import import_module

from django.db import migrations

# The body this one replaces, for going back.
QUADRATIC = import_module("sources.migrations.0013_search_text_plpgsql").PLPGSQL

LINEAR = r"""
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
            SELECT v #>> '{}'
            FROM jsonb_array_elements(jsonb_path_query_array(
                document, 'strict $.** ? (@.type() == "string" || @.type() == "number")'
            )) WITH ORDINALITY AS found(v, n)
            ORDER BY n
        );
    END IF;
    IF metadata IS NOT NULL AND metadata <> '{}'::jsonb THEN
        parts := parts || ARRAY(
            SELECT v #>> '{}'
            FROM jsonb_array_elements(jsonb_path_query_array(
                metadata, 'strict $.** ? (@.type() == "string" || @.type() == "number")'
            )) WITH ORDINALITY AS found(v, n)
            ORDER BY n
        );
    END IF;
    IF cardinality(parts) = 0 THEN
        RETURN NULL;
    END IF;
    RETURN array_to_string(parts, E'\n');
END
$$
"""


def forward(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(LINEAR, params=None)


def backward(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(QUADRATIC, params=None)


class Migration(migrations.Migration):
    dependencies = [("sources", "0014_words_through_trigrams")]

    operations = [migrations.RunPython(forward, backward, elidable=False)]
