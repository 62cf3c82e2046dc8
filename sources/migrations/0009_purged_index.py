from django.db import migrations, models

from powercontext.db.indexes import AddIndexConcurrentlyWherePossible


class Migration(migrations.Migration):
    # CREATE INDEX CONCURRENTLY cannot run in a transaction; the index is built
    # without blocking captures (powercontext/db/indexes.py).
    atomic = False

    dependencies = [
        ("sources", "0008_lifecycle"),
    ]

    operations = [
        AddIndexConcurrentlyWherePossible(
            model_name="contentsource",
            index=models.Index(
                condition=models.Q(("purged_at__isnull", False)),
                fields=["scope", "position"],
                name="sources_source_purged_idx",
            ),
        ),
    ]
