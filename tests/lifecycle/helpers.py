"""Builders for lifecycle tests: notes, closes, holds, purges, redactions."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import connection

from tests.conftest import ApiClient


def note_body(
    scope_id: str,
    source_id: str,
    *,
    content: str = "a note",
    session_id: str = "sess-1",
    expires_at: datetime | None = None,
) -> dict[str, Any]:
    return {
        "scope_id": scope_id,
        "source_id": source_id,
        "content": content,
        "session_id": session_id,
        "note_kind": "inspection",
        "expires_at": None if expires_at is None else expires_at.isoformat(),
    }


def note(api: ApiClient, scope_id: str, source_id: str, **fields: Any) -> Any:
    return api.post(
        "/v1/sources/working-notes", note_body(scope_id, source_id, **fields)
    )


def close(api: ApiClient, scope_id: str, session_id: str = "sess-1") -> Any:
    return api.post(f"/v1/scopes/{scope_id}/sessions/{session_id}/close", {})


def hold(
    api: ApiClient, scope_id: str, session_id: str | None = None, reason: str = "case"
) -> Any:
    body = {"session_id": session_id, "reason": reason}
    return api.post(f"/v1/scopes/{scope_id}/legal-holds", body)


def release(api: ApiClient, scope_id: str, hold_id: str, reason: str = "done") -> Any:
    return api.post(
        f"/v1/scopes/{scope_id}/legal-holds/{hold_id}/release", {"reason": reason}
    )


def purge(
    api: ApiClient, scope_id: str, older_than_seconds: int = 0, dry_run: bool = False
) -> Any:
    return api.post(
        f"/v1/scopes/{scope_id}/purge",
        {"older_than_seconds": older_than_seconds, "dry_run": dry_run},
    )


def redact(
    api: ApiClient, scope_id: str, source_id: str, reason: str = "erasure request"
) -> Any:
    return api.post(
        f"/v1/scopes/{scope_id}/sources/content/{source_id}/redact",
        {"reason": reason},
    )


def resolve(api: ApiClient, scope_id: str, *source_ids: str) -> list[Any]:
    """The resolve reasons of ``source_ids`` for purpose handoff."""
    response = api.post(
        f"/v1/scopes/{scope_id}/evidence/resolve",
        {
            "purpose": "handoff",
            "refs": [{"name": "content", "source_id": s} for s in source_ids],
        },
    )
    assert response.status_code == 200, response.content
    return [item["reason"] for item in response.json()["items"]]


def audit(api: ApiClient, scope_id: str, source_id: str) -> dict[str, Any]:
    response = api.get(f"/v1/scopes/{scope_id}/source-audit/content/{source_id}")
    assert response.status_code == 200, response.content
    return response.json()


def source(api: ApiClient, scope_id: str, source_id: str) -> dict[str, Any]:
    response = api.get(f"/v1/scopes/{scope_id}/sources/content/{source_id}")
    assert response.status_code == 200, response.content
    return response.json()


def tables_holding(text: str) -> list[str]:
    """Every table whose rows, read as text, contain ``text``."""
    found = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            if any(text in str(row) for row in cursor.fetchall()):
                found.append(table)
    return found
