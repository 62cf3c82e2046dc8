"""PostgreSQL triggers refusing UPDATE and DELETE on handoff revisions and their rows.

The last layer of immutability (the models and querysets refuse first): it holds
for raw SQL and any code path that bypasses the models. The head
(``handoffs_handoffhead``) is deliberately left out: commit moves it. SQLite relies
on the model and queryset layers.
"""

from django.db import migrations

TABLES = (
    "handoffs_handoffrevision",
    "handoffs_handoffstatement",
    "handoffs_handoffcitation",
    "handoffs_handofflineage",
)

FORWARD = [
    """
    CREATE OR REPLACE FUNCTION handoffs_refuse_change() RETURNS trigger
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
        FOR EACH ROW EXECUTE FUNCTION handoffs_refuse_change();
        """
        for table in TABLES
    ),
]

BACKWARD = [
    *(f"DROP TRIGGER IF EXISTS {table}_immutable ON {table};" for table in TABLES),
    "DROP FUNCTION IF EXISTS handoffs_refuse_change();",
]


def run(statements):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for statement in statements:
            schema_editor.execute(statement, params=None)

    return apply


class Migration(migrations.Migration):
    dependencies = [("handoffs", "0001_initial")]

    operations = [migrations.RunPython(run(FORWARD), run(BACKWARD))]
