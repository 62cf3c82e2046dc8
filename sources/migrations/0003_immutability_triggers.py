"""PostgreSQL triggers refusing UPDATE and DELETE on Sources and capture attempts.

This is the last layer of immutability: it holds for raw SQL, ``psql`` sessions
and any code path that bypasses the models. SQLite (the embedded default) relies
on the model and queryset layers.
"""

from django.db import migrations

TABLES = ("sources_contentsource", "sources_captureattempt")

FORWARD = [
    """
    CREATE OR REPLACE FUNCTION sources_refuse_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'rows of % are immutable: % refused', TG_TABLE_NAME, TG_OP
            USING ERRCODE = 'P0001';
    END
    $$;
    """,
    *(
        f"""
        CREATE TRIGGER {table}_immutable
        BEFORE UPDATE OR DELETE ON {table}
        FOR EACH ROW EXECUTE FUNCTION sources_refuse_change();
        """
        for table in TABLES
    ),
]

BACKWARD = [
    *(f"DROP TRIGGER IF EXISTS {table}_immutable ON {table};" for table in TABLES),
    "DROP FUNCTION IF EXISTS sources_refuse_change();",
]


def run(statements):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for statement in statements:
            schema_editor.execute(statement, params=None)

    return apply


class Migration(migrations.Migration):
    dependencies = [("sources", "0002_registry")]

    operations = [migrations.RunPython(run(FORWARD), run(BACKWARD))]
