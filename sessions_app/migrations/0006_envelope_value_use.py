"""Stored envelope values are addressed by use as well as digest: the working notes'
values get rows of their own (``for_notes``), so erasing a notes text never deletes
a value another key's revisions still refer to (docs/decisions/0032).

Existing data: every value a revision refers to as notes is copied to a notes row;
the original row stays only while a revision of another key refers to it. Values
are only inserted and deleted, never updated (the PostgreSQL guard refuses UPDATE).
"""

from typing import Any

from django.db import migrations, models

NOTES = "workingNotes"
_CHUNK = 500


def _uses(revisions: Any, envelope_id: int) -> tuple[set[str], set[str]]:
    """The digests the envelope's revisions refer to as notes, and as other keys."""
    notes: set[str] = set()
    others: set[str] = set()
    for digests in revisions.filter(envelope_id=envelope_id).values_list(
        "value_digests", flat=True
    ):
        for key, digest in digests.items():
            (notes if key == NOTES else others).add(digest)
    return notes, others


def split_notes_values(apps: Any, schema_editor: Any) -> None:
    value_model = apps.get_model("sessions_app", "EnvelopeValue")
    revisions = apps.get_model("sessions_app", "EnvelopeRevision").objects
    values = value_model.objects
    envelope_ids = sorted(set(values.values_list("envelope_id", flat=True)))
    for envelope_id in envelope_ids:
        notes, others = _uses(revisions, envelope_id)
        if not notes:
            continue
        shared = list(
            values.filter(
                envelope_id=envelope_id, for_notes=False, digest__in=sorted(notes)
            )
        )
        values.bulk_create(
            [
                value_model(
                    envelope_id=envelope_id,
                    for_notes=True,
                    digest=row.digest,
                    value=row.value,
                )
                for row in shared
            ],
            batch_size=_CHUNK,
        )
        notes_only = [row.pk for row in shared if row.digest not in others]
        for start in range(0, len(notes_only), _CHUNK):
            values.filter(pk__in=notes_only[start : start + _CHUNK]).delete()


def merge_notes_values(apps: Any, schema_editor: Any) -> None:
    """Backwards: one row per digest again, a notes row kept only without a twin."""
    values = apps.get_model("sessions_app", "EnvelopeValue").objects
    twins = values.filter(
        for_notes=False,
        envelope_id=models.OuterRef("envelope_id"),
        digest=models.OuterRef("digest"),
    )
    values.filter(models.Exists(twins), for_notes=True).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("sessions_app", "0005_alter_enveloperevision_operation"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="envelopevalue",
            name="sessions_value_digest_uniq",
        ),
        migrations.AddField(
            model_name="envelopevalue",
            name="for_notes",
            field=models.BooleanField(
                default=False,
                help_text="The working notes' value (else any other key's).",
            ),
        ),
        migrations.AddConstraint(
            model_name="envelopevalue",
            constraint=models.UniqueConstraint(
                fields=("envelope", "for_notes", "digest"),
                name="sessions_value_use_digest_uniq",
            ),
        ),
        migrations.RunPython(split_notes_values, merge_notes_values),
    ]
