import django.db.models.deletion
from django.db import migrations, models

from powercontext.db.indexes import DropForeignKeyIndex


class Migration(migrations.Migration):
    # Each key's own index is covered by a composite index or constraint that
    # leads with the key; DROP INDEX CONCURRENTLY cannot run in a transaction
    # (powercontext/db/indexes.py).
    atomic = False

    dependencies = [
        ("handoffs", "0003_truncate_guards"),
        ("sources", "0010_scope_fk_indexes_covered"),
    ]

    operations = [
        DropForeignKeyIndex(
            model_name="handoffcitation",
            name="statement",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="citations",
                to="handoffs.handoffstatement",
            ),
        ),
        DropForeignKeyIndex(
            model_name="handofflineage",
            name="revision",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="lineage",
                to="handoffs.handoffrevision",
            ),
        ),
        DropForeignKeyIndex(
            model_name="handoffrevision",
            name="scope",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="handoff_revisions",
                to="sources.scope",
            ),
        ),
        DropForeignKeyIndex(
            model_name="handoffstatement",
            name="revision",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="statements",
                to="handoffs.handoffrevision",
            ),
        ),
    ]
