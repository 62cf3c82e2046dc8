import django.db.models.deletion
from django.db import migrations, models

from powercontext.db.indexes import DropForeignKeyIndex


class Migration(migrations.Migration):
    # Each key's own index is covered by a composite index or constraint that
    # leads with the key; DROP INDEX CONCURRENTLY cannot run in a transaction
    # (powercontext/db/indexes.py).
    atomic = False

    dependencies = [
        ("lifecycle", "0002_immutability_triggers"),
        ("sources", "0010_scope_fk_indexes_covered"),
    ]

    operations = [
        DropForeignKeyIndex(
            model_name="legalhold",
            name="scope",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="sources.scope",
            ),
        ),
    ]
