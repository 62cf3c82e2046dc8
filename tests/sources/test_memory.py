"""The legacy Memory routes: the reference's refusals, byte for byte, and ours.

The expected bodies are the reference server's answers to the same requests
(PowerContext 1.4.1); tests/compat/test_reference_errors.py sends them to a live
reference server too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from sources.models import ContentSource
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

LEGACY = (
    "The legacy Memory collection contract cannot continue for this operation. "
    "Reconstruct the request using Atomic Memory operations; do not drop collection "
    "CAS preconditions and retry automatically."
)


def legacy(operation: str, alternatives: list[str], instruction: str) -> dict:
    return {
        "code": "legacy_memory_operation_unsupported",
        "message": LEGACY,
        "details": {
            "kind": "artifact_family",
            "name": "memory",
            "operation": operation,
            "alternatives": alternatives,
            "instruction": instruction,
        },
    }


@pytest.mark.parametrize(
    ("path", "body", "error"),
    [
        (
            "capacity",
            {},
            legacy(
                "collection capacity",
                [],
                "Atomic Memory has no collection capacity budget; this query has "
                "no equivalent.",
            ),
        ),
        (
            "changes",
            {"since_revision": 0},
            legacy(
                "continuous collection changes",
                [],
                "Legacy collection history is archived offline; there is no "
                "continuous changes stream after migration.",
            ),
        ),
        (
            "entries/get",
            {"citation": {"a": 1}},
            legacy(
                "citation read",
                [
                    "GET /v1/scopes/{scope_id}/artifacts/atomic-memory/{artifact_id}"
                    "/revisions/{revision}",
                    "POST /v1/memory/entries/get",
                ],
                "Read the exact Atomic Artifact revision, or resolve the legacy "
                "logical identity with target.",
            ),
        ),
        (
            "entries/revise",
            {"citation": {}, "kind": "k", "text": "t"},
            legacy(
                "citation revise",
                ["PUT /v1/scopes/{scope_id}/artifacts/atomic-memory/{artifact_id}"],
                "Read the Atomic Artifact and use its content ETag for the "
                "replacement precondition.",
            ),
        ),
        (
            "entries/retire",
            {"citation": {}},
            legacy(
                "citation retire",
                ["POST /v1/atomic-memory/lifecycle"],
                "Use forgotten with the exact Atomic Artifact reference and current "
                "state_version.",
            ),
        ),
        (
            "remember",
            {"kind": "decision", "text": "stale", "expected_revision": 2},
            legacy(
                "collection revision precondition",
                ["POST /v1/scopes/{scope_id}/artifacts", "POST /v1/atomic-memory/list"],
                "Use independent atomic-memory Artifact identities and their "
                "content/state preconditions; resolve migrated legacy identities "
                "through POST /v1/memory/entries/get with target.",
            ),
        ),
    ],
)
def test_legacy_operations_get_the_reference_refusal(
    api: ApiClient, scope_id: str, path: str, body: dict[str, Any], error: dict
) -> None:
    response = api.post(f"/v1/memory/{path}", {"scope_id": scope_id, **body})

    assert response.status_code == 422
    assert response.json() == {"error": error}
    assert len(response["X-PowerContext-Request-ID"]) == 16


@pytest.mark.parametrize(
    ("path", "body", "operation"),
    [
        ("remember", {"kind": "k", "text": "t"}, "remember_memory"),
        ("search", {"query": "q"}, "search_memory"),
        ("flush", {}, "flush_memory"),
        ("entries/list", {}, "list_memory_entries"),
        ("entries/get", {"target": {"type": "x"}}, "get_memory_entry"),
    ],
)
def test_memory_features_are_not_supported(
    api: ApiClient, scope_id: str, path: str, body: dict[str, Any], operation: str
) -> None:
    response = api.post(f"/v1/memory/{path}", {"scope_id": scope_id, **body})

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "operation_not_supported"
    assert response.json()["error"]["details"] == {
        "kind": "artifact_family",
        "name": "memory",
        "operation": operation,
    }
    assert not ContentSource.objects.exists()


@pytest.mark.parametrize(
    ("path", "body", "status", "code"),
    [
        (
            "remember",
            {"kind": "k", "text": "t", "expected_revision": 1},
            404,
            "scope_not_found",
        ),
        ("entries/get", {"citation": {}}, 404, "scope_not_found"),
        ("capacity", {}, 422, "legacy_memory_operation_unsupported"),
        ("changes", {}, 422, "legacy_memory_operation_unsupported"),
    ],
)
def test_unknown_scope_is_looked_up_where_the_reference_does(
    api: ApiClient, path: str, body: dict[str, Any], status: int, code: str
) -> None:
    response = api.post(f"/v1/memory/{path}", {"scope_id": "scp_nope", **body})

    assert (response.status_code, response.json()["error"]["code"]) == (status, code)


@pytest.mark.parametrize(
    ("path", "body", "errors"),
    [
        (
            "capacity",
            {"scope_id": 1, "x": 2},
            [("string_type", ["body", "scope_id"]), ("extra_forbidden", ["body", "x"])],
        ),
        ("entries/get", {"scope_id": "s"}, [("value_error", ["body"])]),
        (
            "entries/get",
            {"scope_id": "s", "citation": None},
            [("value_error", ["body"])],
        ),
        (
            "remember",
            {"scope_id": "s", "kind": "", "text": "t", "expected_revision": 0},
            [
                ("string_too_short", ["body", "kind"]),
                ("greater_than_equal", ["body", "expected_revision"]),
            ],
        ),
        (
            "search",
            {"scope_id": "s", "query": "q", "mode": "x"},
            [("enum", ["body", "mode"])],
        ),
        (
            "search",
            {"scope_id": "s", "query": "q", "limit": 51},
            [("less_than_equal", ["body", "limit"])],
        ),
        (
            "changes",
            {"scope_id": "s", "since_revision": "1"},
            [("int_type", ["body", "since_revision"])],
        ),
    ],
)
def test_malformed_requests_get_the_reference_error_items(
    client_for: Callable[..., ApiClient], path: str, body: dict, errors: list
) -> None:
    response = client_for("*:admin").post(f"/v1/memory/{path}", body)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_request"
    assert [
        (item["type"], item["loc"])
        for item in response.json()["error"]["details"]["errors"]
    ] == errors


def test_a_token_without_a_grant_on_the_scope_is_refused(
    scope_id: str, client_for: Callable[..., ApiClient]
) -> None:
    stranger = client_for("scp_other:admin", name="stranger")

    remember = stranger.post(
        "/v1/memory/remember", {"scope_id": scope_id, "kind": "k", "text": "t"}
    )

    assert remember.status_code == 403
