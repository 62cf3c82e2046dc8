"""Tokens rotated away with a grace get their revocation scheduled.

Before this release a rotation with ``grace_seconds > 0`` only shortened the old
token's expiry, which ``PATCH /v1/tokens/{id}`` could lift again. Each such
token not revoked yet gets ``revoked_at`` = its rotation time + grace, as a
rotation writes it now; nothing else changes.
"""

from datetime import timedelta

from django.db import migrations


def schedule_revocations(apps, schema_editor):  # type: ignore[no-untyped-def]
    access_change = apps.get_model("api", "AccessChange")
    api_token = apps.get_model("api", "ApiToken")
    for record in access_change.objects.filter(action="rotate").order_by("id"):
        grace = int((record.detail or {}).get("grace_seconds") or 0)
        if grace <= 0 or record.token_id is None:
            continue
        api_token.objects.filter(
            pk=record.token_id, revoked=False, revoked_at__isnull=True
        ).update(revoked_at=record.at + timedelta(seconds=grace))


class Migration(migrations.Migration):
    dependencies = [("api", "0004_token_fk_index_covered")]

    operations = [
        migrations.RunPython(schedule_revocations, migrations.RunPython.noop),
    ]
