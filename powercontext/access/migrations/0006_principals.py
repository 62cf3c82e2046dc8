"""Principals as rows of their own (docs/decisions/0031-principals.md).

Creates ``PrincipalRecord`` and one row for every principal name that a token or
a principal grant already uses, so nothing existing loses access: each is owned
by operators only (blank owner), created by the first token's minter (or
``migration`` when only a grant names it), at its earliest token or grant.
Tokens and grants are left exactly as they were.
"""

from django.db import migrations, models
from django.utils import timezone


def principals_create(apps, schema_editor):  # type: ignore[no-untyped-def]
    api_token = apps.get_model("api", "ApiToken")
    principal_grant = apps.get_model("api", "PrincipalGrant")
    principal_record = apps.get_model("api", "PrincipalRecord")
    first: dict[str, tuple[object, str]] = {}
    for name, created_at, created_by in api_token.objects.order_by(
        "created_at", "pk"
    ).values_list("principal", "created_at", "created_by"):
        first.setdefault(name, (created_at, created_by or "migration"))
    for name, created_at in principal_grant.objects.order_by(
        "created_at", "pk"
    ).values_list("principal", "created_at"):
        first.setdefault(name, (created_at, "migration"))
    principal_record.objects.bulk_create(
        principal_record(
            name=name,
            owner="",
            created_by=created_by,
            created_at=created_at or timezone.now(),
        )
        for name, (created_at, created_by) in sorted(first.items())
    )


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0005_rotated_tokens_stay_revoked"),
    ]

    operations = [
        migrations.AlterField(
            model_name="accesschange",
            name="action",
            field=models.CharField(
                choices=[
                    ("mint", "Mint"),
                    ("revoke", "Revoke"),
                    ("rotate", "Rotate"),
                    ("expiry", "Expiry"),
                    ("grant_add", "Grant Add"),
                    ("grant_remove", "Grant Remove"),
                    ("principal_grant_add", "Principal Grant Add"),
                    ("principal_create", "Principal Create"),
                ],
                max_length=32,
            ),
        ),
        migrations.CreateModel(
            name="PrincipalRecord",
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
                ("name", models.CharField(max_length=150)),
                (
                    "owner",
                    models.CharField(
                        blank=True,
                        help_text="Who may mint for it besides operators: a principal or admin:USER.",
                        max_length=150,
                    ),
                ),
                (
                    "created_by",
                    models.CharField(
                        help_text="Who created it: a principal, admin:USER, cli:NAME or migration.",
                        max_length=150,
                    ),
                ),
                ("created_at", models.DateTimeField()),
            ],
            options={
                "verbose_name": "principal",
                "constraints": [
                    models.UniqueConstraint(
                        fields=("name",), name="api_principal_name_uniq"
                    )
                ],
            },
        ),
        migrations.RunPython(principals_create, migrations.RunPython.noop),
    ]
