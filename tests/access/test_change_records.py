"""Every change to tokens and grants leaves an append-only record (spec/access.md 1)."""

from __future__ import annotations

from collections.abc import Callable
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from powercontext.access.models import AccessChange
from powercontext.db.immutable import ImmutableRecordError
from tests.access.conftest import Holder, Scopes
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db


def _actions(**filters: Any) -> list[tuple[str, str]]:
    return list(
        AccessChange.objects.filter(**filters)
        .order_by("id")
        .values_list("action", "actor")
    )


def test_the_commands_write_the_same_records(scopes: Scopes) -> None:
    out = StringIO()
    call_command(
        "createtoken",
        "--name",
        "ops",
        "--grant",
        f"{scopes.mine}:viewer",
        stdout=out,
        stderr=StringIO(),
    )
    prefix = out.getvalue().strip().splitlines()[-1][:12]
    call_command("revoketoken", prefix, stdout=StringIO())

    assert _actions(token_prefix=prefix) == [
        ("mint", "cli:createtoken"),
        ("revoke", "cli:revoketoken"),
    ]


def test_a_failed_change_leaves_no_record(
    scopes: Scopes, holder: Callable[..., Holder]
) -> None:
    admin = holder(f"{scopes.mine}:admin")
    before = AccessChange.objects.count()

    response = admin.client.post(
        "/v1/tokens", {"name": "x", "grants": [{"scope": "*", "role": "viewer"}]}
    )

    assert response.status_code == 403
    assert AccessChange.objects.count() == before


def test_records_are_never_changed_or_deleted_through_the_models(
    api: ApiClient, scopes: Scopes
) -> None:
    record = AccessChange.objects.first()
    assert record is not None

    with pytest.raises(ImmutableRecordError):
        record.save()
    with pytest.raises(ImmutableRecordError):
        record.delete()
    with pytest.raises(ImmutableRecordError):
        AccessChange.objects.filter(pk=record.pk).update(actor="someone else")
    with pytest.raises(ImmutableRecordError):
        AccessChange.objects.all().delete()


@pytest.mark.postgres
@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE api_accesschange SET actor = 'forged'",
        "DELETE FROM api_accesschange",
        "TRUNCATE api_accesschange",
    ],
)
def test_postgresql_refuses_changing_records_even_in_raw_sql(
    scopes: Scopes, statement: str
) -> None:
    assert AccessChange.objects.exists()

    with (
        pytest.raises(DatabaseError, match="api_accesschange"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement)

    assert not AccessChange.objects.filter(actor="forged").exists()


def test_the_admin_shows_records_read_only(
    admin_client: Any, api: ApiClient, scopes: Scopes
) -> None:
    record = AccessChange.objects.order_by("id").last()
    assert record is not None

    listing = admin_client.get("/admin/api/accesschange/")
    detail = admin_client.get(f"/admin/api/accesschange/{record.pk}/change/")
    add = admin_client.get("/admin/api/accesschange/add/")
    delete = admin_client.post(
        f"/admin/api/accesschange/{record.pk}/delete/", {"post": "yes"}
    )

    assert listing.status_code == 200
    assert record.actor in listing.content.decode()
    assert detail.status_code == 200
    assert b'name="_save"' not in detail.content
    assert add.status_code == 403
    assert delete.status_code == 403
    assert AccessChange.objects.filter(pk=record.pk).exists()
