"""The per-request statements are prepared on PostgreSQL, and logged readably.

Authentication's token lookup and the capture statement run through
``powercontext.db.cursors.prepared_cursor``: once psycopg has run one
``prepare_threshold`` times on a connection, PostgreSQL keeps its plan. Query logs
(``CaptureQueriesContext``, DEBUG) still show the statement with its values.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings

from tests.conftest import ApiClient

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


def capture_notes(api: ApiClient, scope_id: str, count: int, prefix: str) -> None:
    for index in range(count):
        response = api.post(
            "/v1/sources/working-notes",
            {
                "scope_id": scope_id,
                "source_id": f"{prefix}{index}",
                "content": f"note {index}",
                "session_id": "s",
                "note_kind": "inspection",
            },
        )
        assert response.status_code == 202


def prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def test_token_lookup_and_capture_are_prepared_after_a_few_requests(
    api: ApiClient, scope_id: str
) -> None:
    capture_notes(api, scope_id, 8, "n")

    statements = prepared_statements()

    assert any(
        "sources_contentsource" in sql and "WITH arg" in sql for sql in statements
    )
    assert any("token_hash" in sql for sql in statements)


def test_prepared_capture_still_replays_and_conflicts(
    api: ApiClient, scope_id: str
) -> None:
    capture_notes(api, scope_id, 8, "n")  # from here on the statement is prepared
    body = {
        "scope_id": scope_id,
        "source_id": "n3",
        "content": "note 3",
        "session_id": "s",
        "note_kind": "inspection",
    }

    replay = api.post("/v1/sources/working-notes", body)
    conflict = api.post("/v1/sources/working-notes", {**body, "content": "other"})

    assert replay.status_code == 202
    assert replay.json()["position"] == 4
    assert replay["Idempotent-Replayed"] == "true"
    assert conflict.status_code == 409


@override_settings(DEBUG=True)
def test_query_log_shows_prepared_statements_with_their_values(
    api: ApiClient, scope_id: str
) -> None:
    capture_notes(api, scope_id, 6, "warm")
    with CaptureQueriesContext(connection) as captured:
        capture_notes(api, scope_id, 1, "logged-")

    logged = [query["sql"] for query in captured.captured_queries]
    assert any("'logged-0'" in sql and "WITH arg" in sql for sql in logged)
