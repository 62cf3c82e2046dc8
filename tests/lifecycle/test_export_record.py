"""The export record is written once, one test per layer (STYLE.md): ``save()`` and
the queryset refuse changes, and on PostgreSQL so does the database (the admin is
tests/lifecycle/test_admin.py)."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from lifecycle.models import ExportRecord
from powercontext.db.immutable import ImmutableRecordError
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db


@pytest.fixture
def record(api: ApiClient, scope_id: str) -> ExportRecord:
    assert api.get(f"/v1/scopes/{scope_id}/export").status_code == 200
    return ExportRecord.objects.get()


def test_save_refuses_to_update(record: ExportRecord) -> None:
    record.exported_by = "someone else"
    with pytest.raises(ImmutableRecordError):
        record.save()


@pytest.mark.parametrize("operation", ["update", "delete"])
def test_queryset_update_and_delete_are_refused(
    record: ExportRecord, operation: str
) -> None:
    rows = ExportRecord.objects.all()
    with pytest.raises(ImmutableRecordError):
        rows.update(chain="0" * 64) if operation == "update" else rows.delete()
    assert ExportRecord.objects.get().chain == record.chain


@pytest.mark.postgres
@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE lifecycle_exportrecord SET exported_by = 'x'",
        "DELETE FROM lifecycle_exportrecord",
        "TRUNCATE lifecycle_exportrecord",
    ],
)
def test_postgres_refuses_changes_from_raw_sql(
    record: ExportRecord, statement: str
) -> None:
    with (
        pytest.raises(DatabaseError, match="lifecycle_exportrecord"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(statement)
    assert ExportRecord.objects.get().exported_by == record.exported_by
