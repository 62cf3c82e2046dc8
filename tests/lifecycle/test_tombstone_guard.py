"""The database allows exactly the tombstone change of a Source row and nothing
else (spec/handoff.md 3): a trigger on PostgreSQL and on SQLite, tested with raw
SQL that bypasses every Python layer."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from sources.models import ContentSource
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

TOMBSTONE = (
    "content = NULL, metadata = NULL, content_bytes = 0, metadata_bytes = 0, "
    "purged_at = CURRENT_TIMESTAMP, purge_run = 'run_test'"
)
REFUSED = [
    "content = '\"changed\"'",
    "content = NULL",
    "metadata = NULL",
    "content = NULL, metadata = NULL, purged_at = CURRENT_TIMESTAMP",
    f"{TOMBSTONE}, source_id = 'other'",
    f"{TOMBSTONE}, value_digest = 'x'",
    f"{TOMBSTONE}, content_digest = 'x'",
    f"{TOMBSTONE}, position = 99",
    f"{TOMBSTONE}, expires_at = CURRENT_TIMESTAMP",
    f"{TOMBSTONE}, created_by = 'mallory'",
    "content = NULL, metadata = NULL, content_bytes = 5, metadata_bytes = 0, "
    "purged_at = CURRENT_TIMESTAMP, purge_run = 'run_test'",
    "purged_at = CURRENT_TIMESTAMP, purge_run = 'run_test'",
]


@pytest.fixture
def captured(api: ApiClient, scope_id: str) -> int:
    api.post(
        "/v1/sources/content",
        {"scope_id": scope_id, "source_id": "c1", "content": "x", "metadata": {"a": 1}},
    )
    return ContentSource.objects.get().pk


def _update(assignments: str, pk: int) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE sources_contentsource SET {assignments} WHERE id = %s",
            [pk],
        )


@pytest.mark.parametrize("assignments", REFUSED)
def test_any_other_change_is_refused(captured: int, assignments: str) -> None:
    with pytest.raises(DatabaseError):
        _update(assignments, captured)

    row = ContentSource.objects.get()
    assert (row.content, row.metadata, row.purged_at) == ('"x"', {"a": 1}, None)


def test_the_tombstone_change_is_allowed_once(captured: int) -> None:
    _update(TOMBSTONE, captured)

    row = ContentSource.objects.get()
    assert (row.content, row.metadata, row.purge_run) == (None, None, "run_test")
    with pytest.raises(DatabaseError):
        _update(TOMBSTONE.replace("run_test", "run_again"), captured)
    assert ContentSource.objects.get().purge_run == "run_test"


@pytest.mark.postgres
def test_delete_stays_refused_on_postgresql(captured: int) -> None:
    with (
        pytest.raises(DatabaseError),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute("DELETE FROM sources_contentsource")

    assert ContentSource.objects.count() == 1


@pytest.mark.postgres
def test_the_migration_rewrites_no_row_of_the_registry() -> None:
    """Nullable columns without defaults and DROP NOT NULL: catalogue changes only
    (no ``SET DEFAULT``, no ``NOT NULL`` column, no type change)."""
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("sqlmigrate", "sources", "0008", stdout=out)
    statements = [
        line for line in out.getvalue().splitlines() if "sources_contentsource" in line
    ]

    altering = [s for s in statements if s.startswith("ALTER TABLE")]
    assert len(altering) == 4
    assert all(
        ("ADD COLUMN" in s and "NOT NULL" not in s and "DEFAULT" not in s)
        or "DROP NOT NULL" in s
        for s in altering
    ), altering
