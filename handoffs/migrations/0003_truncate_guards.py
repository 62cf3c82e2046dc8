"""PostgreSQL statement triggers refusing TRUNCATE of the append-only tables.

Row triggers never fire on TRUNCATE, so ``truncate handoffs_handoffrevision`` used to empty the
table past every other guard. Django's ``flush`` still works: the project's backend
runs it with ``session_replication_role = replica`` (superuser only).
"""

from django.db import migrations

from powercontext.db.guards import (
    guards,
    on_postgresql,
    refusing_function,
    truncate_guard,
)

TABLES = (
    "handoffs_handoffrevision",
    "handoffs_handoffstatement",
    "handoffs_handoffcitation",
    "handoffs_handofflineage",
)
FUNCTION = "handoffs_refuse_truncate"

FORWARD, BACKWARD = guards(
    refusing_function(FUNCTION, verb="append-only"),
    (truncate_guard(table, FUNCTION) for table in TABLES),
)


class Migration(migrations.Migration):
    dependencies = [("handoffs", "0002_immutability_triggers")]

    operations = [on_postgresql(FORWARD, BACKWARD)]
