"""PostgreSQL triggers refusing UPDATE, DELETE and TRUNCATE of lifecycle records.

The last layer under the models (``ImmutableModel``) and the read-only admin: a
hold, its release, a purge run and a redaction are written once and kept. SQLite
relies on the layers above.
"""

from django.db import migrations

from powercontext.db.guards import (
    guards,
    on_postgresql,
    refusing_function,
    row_guard,
    truncate_guard,
)

TABLES = (
    "lifecycle_legalhold",
    "lifecycle_legalholdrelease",
    "lifecycle_purgerun",
    "lifecycle_redaction",
)
FUNCTION = "lifecycle_refuse_change"
TRUNCATE_FUNCTION = "lifecycle_refuse_truncate"

FORWARD, BACKWARD = guards(
    refusing_function(FUNCTION),
    [
        *(row_guard(table, FUNCTION) for table in TABLES),
        *(truncate_guard(table, TRUNCATE_FUNCTION) for table in TABLES),
    ],
)
TRUNCATE_FORWARD, TRUNCATE_BACKWARD = guards(
    refusing_function(TRUNCATE_FUNCTION, verb="append-only"), []
)


class Migration(migrations.Migration):
    dependencies = [("lifecycle", "0001_initial")]

    operations = [
        on_postgresql(TRUNCATE_FORWARD + FORWARD, BACKWARD + TRUNCATE_BACKWARD)
    ]
