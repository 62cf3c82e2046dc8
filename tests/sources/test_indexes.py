"""Every registry read is servable by an index (api.md 6, 6.1, 6.2).

The planner prefers a sequential scan on tiny tables, so each test disables
sequential scans for the EXPLAIN: if no index can serve the query, PostgreSQL
still has to scan the table and the plan says so.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.conftest import ApiClient

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

REGISTRY_TABLES = (
    "sources_contentsource",
    "sources_captureattempt",
    "sources_sourcejournalhead",
)


@pytest.fixture
def populated(api: ApiClient, scope_id: str) -> str:
    for i in range(5):
        api.post(
            "/v1/sources/content",
            {"scope_id": scope_id, "source_id": f"p{i}", "content": "c"},
        )
        api.post(
            "/v1/sources/working-notes",
            {
                "scope_id": scope_id,
                "source_id": f"n{i}",
                "content": "n",
                "session_id": f"s{i % 2}",
                "note_kind": "inspection",
            },
        )
    return scope_id


def registry_selects(
    api: ApiClient, path: str, query: dict[str, Any]
) -> list[tuple[str, Any]]:
    with CaptureQueriesContext(connection) as captured:
        response = api.get(path, query=query)
    assert response.status_code == 200, response.content
    return [
        (q["sql"], None)
        for q in captured.captured_queries
        if q["sql"].lstrip().upper().startswith("SELECT")
        and any(table in q["sql"] for table in REGISTRY_TABLES)
    ]


def plan_of(sql: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/v1/scopes/{scope}/sources", {"limit": 3}),
        ("/v1/scopes/{scope}/sources/content/p1", {}),
        ("/v1/scopes/{scope}/sources/window", {"after": 2, "limit": 3}),
        ("/v1/scopes/{scope}/source-audit", {}),
        ("/v1/scopes/{scope}/source-audit", {"working_note": "true"}),
        ("/v1/scopes/{scope}/source-audit", {"working_note": "false"}),
        ("/v1/scopes/{scope}/source-audit", {"session_id": "s1"}),
        ("/v1/scopes/{scope}/source-audit", {"note_kind": "inspection"}),
        ("/v1/scopes/{scope}/source-audit", {"state": "expired"}),
        ("/v1/scopes/{scope}/source-audit", {"state": "active", "after_position": 3}),
        ("/v1/scopes/{scope}/source-audit/content/n1", {}),
        ("/v1/scopes/{scope}/source-attempts/content/n1", {}),
    ],
)
def test_reads_use_indexes_not_sequential_scans(
    api: ApiClient, populated: str, path: str, query: dict
) -> None:
    selects = registry_selects(api, path.format(scope=populated), query)

    assert selects
    for sql, _ in selects:
        plan = plan_of(sql)
        assert not any(f"Seq Scan on {table}" in plan for table in REGISTRY_TABLES), (
            sql + "\n" + plan
        )
