"""Builders for search tests: captures and searches through the HTTP API."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from tests.conftest import ApiClient


def capture(
    api: ApiClient,
    scope_id: str,
    source_id: str,
    content: str,
    metadata: dict[str, Any] | None = None,
) -> Any:
    body = {"scope_id": scope_id, "source_id": source_id, "content": content}
    if metadata is not None:
        body["metadata"] = metadata
    response = api.post("/v1/sources/content", body)
    assert response.status_code == 202, response.content
    return response


def search(api: ApiClient, scope_id: str, q: str, **params: Any) -> Any:
    query = urlencode({"q": q, **params})
    return api.get(f"/v1/scopes/{scope_id}/search?{query}")


def found(api: ApiClient, scope_id: str, q: str, **params: Any) -> list[str]:
    """The source ids ``q`` finds, best first (one page)."""
    response = search(api, scope_id, q, **params)
    assert response.status_code == 200, response.content
    return [item["source_id"] for item in response.json()["items"]]


def search_envelopes(api: ApiClient, scope_id: str, q: str, **params: Any) -> Any:
    query = urlencode({"q": q, **params})
    return api.get(f"/v1/scopes/{scope_id}/search/envelopes?{query}")


def envelopes_found(api: ApiClient, scope_id: str, q: str, **params: Any) -> list[str]:
    response = search_envelopes(api, scope_id, q, **params)
    assert response.status_code == 200, response.content
    return [item["session_id"] for item in response.json()["items"]]


def redact_matching(
    api: ApiClient,
    scope_id: str,
    q: str,
    *,
    match: str = "words",
    dry_run: bool = False,
    reason: str = "erasure request",
) -> Any:
    body = {"q": q, "match": match, "reason": reason, "dry_run": dry_run}
    return api.post(f"/v1/scopes/{scope_id}/redactions", body)
