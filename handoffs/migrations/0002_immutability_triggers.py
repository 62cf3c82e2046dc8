"""PostgreSQL triggers refusing UPDATE and DELETE on handoff revisions and their rows.

The last layer of immutability (the models and querysets refuse first): it holds
for raw SQL and any code path that bypasses the models. The head
(``handoffs_handoffhead``) is deliberately left out: commit moves it. SQLite relies
on the model and queryset layers.
"""

from django.db import migrations

from powercontext.db.guards import guards, on_postgresql, refusing_function, row_guard

TABLES = (
    "handoffs_handoffrevision",
    "handoffs_handoffstatement",
    "handoffs_handoffcitation",
    "handoffs_handofflineage",
)
FUNCTION = "handoffs_refuse_change"

FORWARD, BACKWARD = guards(
    refusing_function(FUNCTION), (row_guard(table, FUNCTION) for table in TABLES)
)


class Migration(migrations.Migration):
    dependencies = [("handoffs", "0001_initial")]

    operations = [on_postgresql(FORWARD, BACKWARD)]
