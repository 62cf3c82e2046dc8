"""The capture write (``sources/journal.py``) in the form each database runs.

On PostgreSQL a new Source, its journal head's next position and its
``accepted`` attempt are written by one statement (a data-modifying CTE); SQLite
has no data-modifying CTEs and runs the portable form - the head's update, the
Source's insert and the attempt's insert as statements of their own, in one
transaction. Each test is marked for the database whose form it shows and runs
in that database's suite (``make test-postgres`` / ``make test-sqlite``).
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sources.models import CaptureAttempt, ContentSource, SourceJournalHead
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db
TABLES = (
    SourceJournalHead._meta.db_table,
    ContentSource._meta.db_table,
    CaptureAttempt._meta.db_table,
)
CAPTURES = {
    "content": ("/v1/sources/content", {}),
    "working note": (
        "/v1/sources/working-notes",
        {"session_id": "s", "note_kind": "inspection"},
    ),
}


def capture_statements(api: ApiClient, scope_id: str, kind: str) -> list[str]:
    """Capture a new Source; the statements that wrote to the journal's tables."""
    path, extra = CAPTURES[kind]
    body: dict[str, Any] = {
        "scope_id": scope_id,
        "source_id": "first",
        "content": "text",
        **extra,
    }
    with CaptureQueriesContext(connection) as captured:
        response = api.post(path, body)
    assert response.status_code == 202
    assert response.json()["position"] == 1
    assert ContentSource.objects.get(scope_id=scope_id, source_id="first").position == 1
    assert SourceJournalHead.objects.get(scope_id=scope_id).last_position == 1
    assert CaptureAttempt.objects.filter(
        scope_id=scope_id, source_id="first", outcome="accepted"
    ).exists()
    return [
        query["sql"]
        for query in captured.captured_queries
        if query["sql"].lstrip().upper().startswith(("WITH", "INSERT", "UPDATE"))
        and any(table in query["sql"] for table in TABLES)
    ]


@pytest.mark.postgres
@pytest.mark.parametrize("kind", CAPTURES)
def test_postgresql_writes_a_capture_in_one_statement(
    api: ApiClient, scope_id: str, kind: str
) -> None:
    statements = capture_statements(api, scope_id, kind)

    assert len(statements) == 1
    assert statements[0].lstrip().startswith("WITH arg")
    assert all(table in statements[0] for table in TABLES)


@pytest.mark.sqlite
@pytest.mark.parametrize("kind", CAPTURES)
def test_sqlite_writes_a_capture_in_three_statements(
    api: ApiClient, scope_id: str, kind: str
) -> None:
    statements = capture_statements(api, scope_id, kind)

    assert [sql.split()[0].upper() for sql in statements] == [
        "UPDATE",
        "INSERT",
        "INSERT",
    ]
    assert [
        next(table for table in TABLES if table in sql) for sql in statements
    ] == list(TABLES)
