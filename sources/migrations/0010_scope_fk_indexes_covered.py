import django.db.models.deletion
from django.db import migrations, models

from powercontext.db.indexes import DropForeignKeyIndex


class Migration(migrations.Migration):
    # Each key's own index is covered by a composite index or constraint that
    # leads with the key; DROP INDEX CONCURRENTLY cannot run in a transaction
    # (powercontext/db/indexes.py).
    atomic = False

    dependencies = [
        ("sources", "0009_purged_index"),
    ]

    operations = [
        DropForeignKeyIndex(
            model_name="captureattempt",
            name="scope",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="sources.scope",
            ),
        ),
        DropForeignKeyIndex(
            model_name="contentsource",
            name="scope",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="sources",
                to="sources.scope",
            ),
        ),
        DropForeignKeyIndex(
            model_name="scopecontextreference",
            name="scope",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="context_refs",
                to="sources.scope",
            ),
        ),
        DropForeignKeyIndex(
            model_name="scopeexternalreference",
            name="scope",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="external_refs",
                to="sources.scope",
            ),
        ),
        DropForeignKeyIndex(
            model_name="sessionclosure",
            name="scope",
            field=models.ForeignKey(
                db_index=False,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to="sources.scope",
            ),
        ),
    ]
