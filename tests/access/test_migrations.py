"""The access app's data migrations, run on rows as the previous release left them."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest
from django.apps import apps
from django.utils import timezone

from powercontext.access.changes import Actor, change_record
from powercontext.access.models import (
    AccessAction,
    ApiToken,
    PrincipalGrant,
    PrincipalRecord,
)
from powercontext.access.tokens import token_create
from powercontext.principals import Role
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

principals = importlib.import_module("powercontext.access.migrations.0006_principals")
rotated = importlib.import_module(
    "powercontext.access.migrations.0005_rotated_tokens_stay_revoked"
)


def test_0006_creates_a_principal_for_every_name_tokens_and_grants_use() -> None:
    token_create(principal="ci-bot", grants=[("*", Role.VIEWER)], actor=Actor("root"))
    token_create(principal="ci-bot", grants=[("*", Role.ADMIN)], actor=Actor("other"))
    PrincipalGrant.objects.create(
        principal="creator-only",
        scope_id="scp_x",
        role=Role.ADMIN,
        created_at=timezone.now(),
    )
    PrincipalRecord.objects.all().delete()  # as before the migration
    tokens_before = list(ApiToken.objects.order_by("pk").values())

    principals.principals_create(apps, None)

    assert sorted(
        PrincipalRecord.objects.values_list("name", "owner", "created_by")
    ) == [
        ("ci-bot", "", "root"),
        ("creator-only", "", "migration"),
    ]
    assert list(ApiToken.objects.order_by("pk").values()) == tokens_before


def test_0005_schedules_the_end_of_a_grace_given_before_it() -> None:
    old, raw = token_create(principal="svc", grants=[("*", Role.VIEWER)])
    at = timezone.now() - timedelta(seconds=120)
    # What a rotation with a 60 s grace wrote before: an expiry, then lifted.
    change_record(
        actor=Actor("root"),
        action=AccessAction.ROTATE,
        at=at,
        token=old,
        new_token_id=old.pk + 1,
        grace_seconds=60,
    )
    assert ApiClient(raw).get("/v1/scopes").status_code == 200

    rotated.schedule_revocations(apps, None)

    assert ApiToken.objects.get(pk=old.pk).revoked_at == at + timedelta(seconds=60)
    assert ApiClient(raw).get("/v1/scopes").status_code == 401
