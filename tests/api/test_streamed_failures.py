"""A streamed answer whose database fails is ``503 unavailable``, never a 500.

The lists that carry stored content are written item by item (docs/api.md,
"Lists"): their rows are read while the answer is sent. A failure there used to
surface after the view had returned, outside the API's error handling, and the
server answered its own plain 500 (found by the consistency campaign, during
PostgreSQL restarts and cut connections). Now the first chunk is read before the
answer starts, so a database that fails then gets the one error renderer's 503.

The failure is real to Django: ``connection.execute_wrapper`` (Django's public
hook around every query) raises ``OperationalError`` on the query that loads the
rows, found by recording the request's queries once without it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import OperationalError, connection

from tests.conftest import ApiClient, error_of

pytestmark = pytest.mark.django_db

STREAMED_LISTS = {
    "list_sources": "/v1/scopes/{scope_id}/sources",
    "get_source_window": "/v1/scopes/{scope_id}/sources/window?after=0",
    "list_source_audit": "/v1/scopes/{scope_id}/source-audit",
}


def recording(statements: list[str]) -> Callable[..., Any]:
    def execute(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append(sql)
        return execute(sql, params, many, context)

    return execute


def failing(sql_text: str) -> Callable[..., Any]:
    def execute(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if sql == sql_text:
            raise OperationalError(
                "terminating connection due to administrator command"
            )
        return execute(sql, params, many, context)

    return execute


@pytest.mark.parametrize("path", STREAMED_LISTS.values(), ids=STREAMED_LISTS.keys())
def test_a_database_failure_while_reading_the_rows_is_503(
    api: ApiClient, scope_id: str, path: str
) -> None:
    for index in range(3):
        response = api.post(
            "/v1/sources/content",
            {"scope_id": scope_id, "source_id": f"s{index}", "content": "c" * 64},
        )
        assert response.status_code == 202, response.content
    url = path.format(scope_id=scope_id)
    statements: list[str] = []
    with connection.execute_wrapper(recording(statements)):
        assert api.get(url).status_code == 200
    rows_query = statements[-1]

    with connection.execute_wrapper(failing(rows_query)):
        response = api.get(url)

    assert response.status_code == 503, response.content
    assert error_of(response)["code"] == "unavailable"
