"""PostgreSQL triggers keeping the access change records append-only.

UPDATE and DELETE are refused row by row, TRUNCATE by a statement trigger; Django's
``flush`` still works (the project's backend runs it as a replica session).
"""

from django.db import migrations

from powercontext.db.guards import (
    guards,
    on_postgresql,
    refusing_function,
    row_guard,
    truncate_guard,
)

TABLE = "api_accesschange"
ROWS, TRUNCATE = "api_accesschange_refuse_change", "api_accesschange_refuse_truncate"

ROW_FORWARD, ROW_BACKWARD = guards(refusing_function(ROWS), [row_guard(TABLE, ROWS)])
TRUNCATE_FORWARD, TRUNCATE_BACKWARD = guards(
    refusing_function(TRUNCATE, verb="append-only"), [truncate_guard(TABLE, TRUNCATE)]
)


class Migration(migrations.Migration):
    dependencies = [("api", "0002_access_changes")]

    operations = [
        on_postgresql(ROW_FORWARD, ROW_BACKWARD),
        on_postgresql(TRUNCATE_FORWARD, TRUNCATE_BACKWARD),
    ]
