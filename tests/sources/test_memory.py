"""The legacy Memory routes: remember, list, search and read, the reference's
refusals byte for byte, and ours.

The expected bodies are the reference server's answers to the same requests
(PowerContext 1.4.1), except where docs/api.md lists a difference;
tests/compat/test_reference_errors.py sends the refused ones to a live reference
server too.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from sources.models import ContentSource, MemoryRecord
from tests.conftest import ApiClient, create_scope

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


@pytest.fixture
def other_scope_id(api: ApiClient) -> str:
    return create_scope(api, key="other")


def record(artifact_id: str, kind: str, text: str) -> dict[str, Any]:
    return {
        "artifact": {
            "family": "atomic-memory",
            "artifact_id": artifact_id,
            "revision": 1,
        },
        "kind": kind,
        "text": text,
        "state": "active",
        "state_version": 0,
        "merged_into_id": None,
    }


def remember(api: ApiClient, scope_id: str, text: str, kind: str = "fact") -> str:
    response = api.post(
        "/v1/memory/remember", {"scope_id": scope_id, "kind": kind, "text": text}
    )
    assert response.status_code == 200, response.content
    return response.json()["records"][0]["artifact"]["artifact_id"]


def test_remember_stores_a_record_and_returns_it(api: ApiClient, scope_id: str) -> None:
    response = api.post(
        "/v1/memory/remember",
        {
            "scope_id": scope_id,
            "kind": " decision ",
            "text": "  cafe\u0301 first  ",
            "reason": "why",
        },
    )

    assert response.status_code == 200
    stored = MemoryRecord.objects.get()
    assert response.json() == {
        "changed": True,
        "records": [record(stored.artifact_id, " decision ", "caf\u00e9 first")],
    }
    assert re.fullmatch(r"art_[0-9a-f]{32}", stored.artifact_id)
    assert (stored.scope_id, stored.kind, stored.text, stored.reason) == (
        scope_id,
        " decision ",
        "caf\u00e9 first",
        "why",
    )
    assert len(response["X-PowerContext-Request-ID"]) == 16
    assert not ContentSource.objects.exists()


def test_remembering_the_same_text_twice_stores_two_records(
    api: ApiClient, scope_id: str
) -> None:
    first = remember(api, scope_id, "same")
    second = remember(api, scope_id, "same")

    assert first != second
    assert MemoryRecord.objects.count() == 2


@pytest.mark.parametrize(
    ("kind", "text", "errors"),
    [
        (
            "k",
            " \t\n ",
            [
                (
                    "value_error",
                    ["text"],
                    "Value error, memory entry text must be non-empty",
                )
            ],
        ),
        (
            "  ",
            "t",
            [("value_error", ["kind"], "Value error, memory kind must not be blank")],
        ),
        (
            "k",
            "a" * 8193,
            [
                (
                    "value_error",
                    ["text"],
                    "Value error, memory entry text must not exceed 8192 UTF-8 bytes",
                )
            ],
        ),
    ],
)
def test_blank_or_long_memory_text_gets_the_reference_error_items(
    api: ApiClient, scope_id: str, kind: str, text: str, errors: list
) -> None:
    response = api.post(
        "/v1/memory/remember", {"scope_id": scope_id, "kind": kind, "text": text}
    )

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "invalid_request"
    assert [
        (item["type"], item["loc"], item["msg"])
        for item in response.json()["error"]["details"]["errors"]
    ] == errors
    assert not MemoryRecord.objects.exists()


def test_text_of_8192_bytes_after_trimming_is_stored(
    api: ApiClient, scope_id: str
) -> None:
    remember(api, scope_id, "a" * 8192 + "  ")

    assert MemoryRecord.objects.get().text == "a" * 8192


def test_entries_list_pages_the_scope_records_in_artifact_id_order(
    api: ApiClient, scope_id: str, other_scope_id: str
) -> None:
    ids = sorted(remember(api, scope_id, f"fact {n}") for n in range(3))
    remember(api, other_scope_id, "elsewhere")

    first = api.post("/v1/memory/entries/list", {"scope_id": scope_id, "limit": 2})
    cursor = first.json()["next_cursor"]
    second = api.post(
        "/v1/memory/entries/list",
        {"scope_id": scope_id, "limit": 2, "cursor": cursor},
    )

    assert first.status_code == second.status_code == 200
    listed = first.json()["entries"] + second.json()["entries"]
    assert [entry["artifact"]["artifact_id"] for entry in listed] == ids
    assert listed[0] == record(
        ids[0], "fact", MemoryRecord.objects.get(artifact_id=ids[0]).text
    )
    assert second.json()["next_cursor"] is None


def test_entries_list_refuses_a_cursor_of_another_scope(
    api: ApiClient, scope_id: str, other_scope_id: str
) -> None:
    for n in range(2):
        remember(api, other_scope_id, f"fact {n}")
    cursor = api.post(
        "/v1/memory/entries/list", {"scope_id": other_scope_id, "limit": 1}
    ).json()["next_cursor"]

    response = api.post(
        "/v1/memory/entries/list", {"scope_id": scope_id, "cursor": cursor}
    )

    assert (response.status_code, response.json()["error"]["code"]) == (
        400,
        "invalid_cursor",
    )


@pytest.mark.parametrize(
    ("path", "body", "key"),
    [("entries/list", {}, "entries"), ("search", {"query": "parser"}, "hits")],
)
def test_a_tag_filter_matches_no_record_as_none_carries_tags(
    api: ApiClient, scope_id: str, path: str, body: dict[str, Any], key: str
) -> None:
    remember(api, scope_id, "tagged parser")
    untagged = api.post(f"/v1/memory/{path}", {"scope_id": scope_id, **body})

    response = api.post(
        f"/v1/memory/{path}",
        {"scope_id": scope_id, **body, "tag_filter": {"tags": ["a"]}},
    )

    assert len(untagged.json()[key]) == 1
    assert response.status_code == 200
    assert response.json()[key] == []


def test_search_ranks_records_by_the_query_words_they_hold(
    api: ApiClient, scope_id: str, other_scope_id: str
) -> None:
    both = remember(api, scope_id, "The Parser uses a stable grammar")
    one = remember(api, scope_id, "grammar only")
    remember(api, scope_id, "nothing relevant")
    remember(api, other_scope_id, "parser grammar elsewhere")

    response = api.post(
        "/v1/memory/search",
        {"scope_id": scope_id, "query": "parser, GRAMMAR zebra", "mode": "fts"},
    )

    assert response.status_code == 200
    assert response.json() == {
        "mode": "text",
        "hits": [
            {
                "memory": record(both, "fact", "The Parser uses a stable grammar"),
                "score": 1 / 61,
                "matched_by": ["text"],
            },
            {
                "memory": record(one, "fact", "grammar only"),
                "score": 1 / 62,
                "matched_by": ["text"],
            },
        ],
    }


def test_search_limit_and_a_query_without_words(api: ApiClient, scope_id: str) -> None:
    for n in range(3):
        remember(api, scope_id, f"word {n}")

    limited = api.post(
        "/v1/memory/search", {"scope_id": scope_id, "query": "word", "limit": 2}
    )
    wordless = api.post("/v1/memory/search", {"scope_id": scope_id, "query": "?!"})

    assert len(limited.json()["hits"]) == 2
    assert wordless.json() == {"mode": "text", "hits": []}


def test_get_by_legacy_target_is_not_found(api: ApiClient, scope_id: str) -> None:
    remember(api, scope_id, "kept")
    target = {
        "type": "memory_entry",
        "family": "memory",
        "artifact_id": "m",
        "entry_id": "e",
    }

    response = api.post(
        "/v1/memory/entries/get", {"scope_id": scope_id, "target": target}
    )

    assert response.status_code == 404
    assert response.json()["error"] == {
        "code": "not_found",
        "message": "The requested value was not found.",
        "details": None,
    }


@pytest.mark.parametrize(
    ("path", "body", "operation"),
    [
        ("flush", {}, "flush_memory"),
        ("search", {"query": "q", "mode": "vector"}, "search_memory"),
        ("search", {"query": "q", "mode": "hybrid"}, "search_memory"),
    ],
)
def test_memory_features_without_a_counterpart_are_not_supported(
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
