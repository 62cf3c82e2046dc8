"""Lifecycle (docs/api.md): tombstone columns, session closures, and the
registry's guard allowing exactly the tombstone change, on PostgreSQL and SQLite.

The new columns are nullable without defaults and ``DROP NOT NULL`` only changes
the catalogue, so PostgreSQL rewrites no row of the registry (a 1M-row table
migrates in milliseconds; docs/decisions/0013-tombstones.md).
"""

import django.db.models.deletion
from django.db import migrations, models

import powercontext.jsonvalues
from powercontext.db.guards import (
    Tombstone,
    guards,
    on_vendor,
    refusing_function,
    row_guard,
    tombstone_guard,
    truncate_guard,
)

TABLE = "sources_contentsource"
TOMBSTONE = Tombstone(
    kept=(
        "id",
        "scope_id",
        "source_type",
        "source_id",
        "position",
        "is_working_note",
        "session_id",
        "note_kind",
        "expires_at",
        "value_digest",
        "content_digest",
        "created_at",
        "created_by",
        "request_id",
    ),
    cleared=("content", "metadata"),
    zeroed=("content_bytes", "metadata_bytes"),
    stamped=("purged_at", "purge_run"),
)
PG_FORWARD, PG_BACKWARD = tombstone_guard(
    TABLE, "sources_tombstone_only", TOMBSTONE, vendor="postgresql"
)
# Reversing restores 0003's trigger, which refuses every UPDATE.
PG_BACKWARD.append(row_guard(TABLE, "sources_refuse_change")[0])
SQLITE_FORWARD, SQLITE_BACKWARD = tombstone_guard(TABLE, "", TOMBSTONE, vendor="sqlite")
CLOSURE = "sources_sessionclosure"
CLOSURE_FORWARD, CLOSURE_BACKWARD = guards(
    refusing_function("sources_closure_refuse_change"),
    [
        row_guard(CLOSURE, "sources_closure_refuse_change"),
        truncate_guard(CLOSURE, "sources_refuse_truncate"),
    ],
)


class Migration(migrations.Migration):
    dependencies = [
        ("sources", "0007_console_indexes"),
    ]

    operations = [
        migrations.AddField(
            model_name="contentsource",
            name="purge_run",
            field=models.CharField(
                blank=True,
                help_text="The purge or redaction id.",
                max_length=40,
                null=True,
            ),
        ),
        migrations.AddField(
            model_name="contentsource",
            name="purged_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="contentsource",
            name="content",
            field=models.TextField(
                help_text="RFC 8785 canonical JSON of the content value.", null=True
            ),
        ),
        migrations.AlterField(
            model_name="contentsource",
            name="metadata",
            field=models.JSONField(
                decoder=powercontext.jsonvalues.StoredJSONDecoder,
                default=dict,
                null=True,
            ),
        ),
        migrations.CreateModel(
            name="SessionClosure",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True,
                        primary_key=True,
                        serialize=False,
                        verbose_name="ID",
                    ),
                ),
                ("session_id", models.CharField(max_length=256)),
                ("closed_at", models.DateTimeField()),
                ("closed_by", models.CharField(max_length=150)),
                ("request_id", models.CharField(max_length=16)),
                (
                    "scope",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="+",
                        to="sources.scope",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("scope", "session_id"),
                        name="sources_closure_session_uniq",
                    )
                ],
            },
        ),
        on_vendor("postgresql", PG_FORWARD, PG_BACKWARD),
        on_vendor("sqlite", SQLITE_FORWARD, SQLITE_BACKWARD),
        on_vendor("postgresql", CLOSURE_FORWARD, CLOSURE_BACKWARD),
    ]
