import django.db.models.deletion
from django.db import migrations, models

from powercontext.db.indexes import DropForeignKeyIndex


class Migration(migrations.Migration):
    # Each key's own index is covered by a composite index or constraint that
    # leads with the key; DROP INDEX CONCURRENTLY cannot run in a transaction
    # (powercontext/db/indexes.py).
    atomic = False

    dependencies = [
        ("api", "0003_access_change_guards"),
    ]

    operations = [
        DropForeignKeyIndex(
            model_name="tokengrant",
            name="token",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="grants",
                to="api.apitoken",
            ),
        ),
    ]
