"""PostgreSQL triggers refusing UPDATE and DELETE on Sources and capture attempts.

This is the last layer of immutability: it holds for raw SQL, ``psql`` sessions
and any code path that bypasses the models. SQLite (the embedded default) relies
on the model and queryset layers.
"""

from django.db import migrations

from powercontext.db.guards import guards, on_postgresql, refusing_function, row_guard

TABLES = ("sources_contentsource", "sources_captureattempt")
FUNCTION = "sources_refuse_change"

FORWARD, BACKWARD = guards(
    refusing_function(FUNCTION), (row_guard(table, FUNCTION) for table in TABLES)
)


class Migration(migrations.Migration):
    dependencies = [("sources", "0002_registry")]

    operations = [on_postgresql(FORWARD, BACKWARD)]
