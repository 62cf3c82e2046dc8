"""Bad input to evidence and handoff operations: always a 4xx, never a 5xx.

Each row mutates a valid request (``...`` deletes the key) and names the first
error's ``type`` and ``loc``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import ApiClient, error_of
from tests.handoffs.helpers import (
    ACTIVATE,
    COMMIT,
    CONTINUE,
    FINALIZE,
    HINT,
    PREPARE,
    capture,
    draft,
    mutated,
    prepared,
    resolve_url,
    sc,
)

pytestmark = pytest.mark.django_db

URLS = [FINALIZE, COMMIT, CONTINUE, HINT, PREPARE, ACTIVATE, "RESOLVE"]


def url_for(url: str, scope_id: str) -> str:
    return {"RESOLVE": resolve_url(scope_id)}.get(url, url)


def finalize_body(scope_id: str) -> dict[str, Any]:
    return {"scope_id": scope_id, "draft": draft([sc("c-1")], next_action=[sc("c-1")])}


def resolve_body(scope_id: str) -> dict[str, Any]:
    return {"purpose": "handoff", "refs": [{"name": "content", "source_id": "c-1"}]}


def commit_body(scope_id: str) -> dict[str, Any]:
    return {"scope_id": scope_id, "handoff": prepared(scope_id, draft([sc("c-1")]))}


D = ["draft"]
S0 = [*D, "state", 0]
C0 = [*S0, "citations", 0]

FINALIZE_CASES = [
    pytest.param(D, ..., "missing", D, id="no-draft"),
    pytest.param(
        [*D, "next_action"], ..., "missing", [*D, "next_action"], id="no-next"
    ),
    pytest.param(
        [*D, "omissions"], ..., "missing", [*D, "omissions"], id="no-omissions"
    ),
    pytest.param([*D, "state"], [], "too_short", [*D, "state"], id="no-state"),
    pytest.param(
        [*D, "state"],
        [{"text": "t", "citations": [sc("c-1")]}] * 65,
        "too_long",
        [*D, "state"],
        id="65-statements",
    ),
    pytest.param(
        [*D, "omissions"],
        [{"text": "t", "citation": None}] * 65,
        "too_long",
        [*D, "omissions"],
        id="65-omissions",
    ),
    pytest.param(
        [*S0, "citations"], [sc("c-1")] * 33, "too_long", [*S0, "citations"], id="33"
    ),
    pytest.param([*S0, "citations"], [], "too_short", [*S0, "citations"], id="0-cit"),
    pytest.param(
        [*S0, "citations"], {"a": 1}, "list_type", [*S0, "citations"], id="cit-object"
    ),
    pytest.param(
        [*S0, "text"], "x" * 8193, "string_too_long", [*S0, "text"], id="8193"
    ),
    pytest.param([*S0, "text"], " \n", "string_pattern_mismatch", [*S0, "text"]),
    pytest.param([*S0, "text"], 5, "string_type", [*S0, "text"], id="text-int"),
    pytest.param([*D, "objective"], None, "string_type", [*D, "objective"]),
    pytest.param([*D, "disposition"], "done", "enum", [*D, "disposition"]),
    pytest.param(C0, "c-1", "dict_type", C0, id="citation-string"),
    pytest.param(C0, {"source_ref": {}}, "union_tag_not_found", C0, id="no-kind"),
    pytest.param(C0, {"kind": "url"}, "union_tag_invalid", C0, id="kind-url"),
    pytest.param(C0, {"kind": ["source"]}, "union_tag_invalid", C0, id="kind-list"),
    pytest.param(
        [*C0, "content_digest"],
        "sha256:x",
        "extra_forbidden",
        [*C0, "source", "content_digest"],
        id="citation-extra",
    ),
    pytest.param(
        [*C0, "source_ref", "source_id"],
        " c-1",
        "padded",
        [*C0, "source", "source_ref", "source_id"],
        id="padded-id",
    ),
    pytest.param(
        [*C0, "source_ref", "source_id"],
        "",
        "string_too_short",
        [*C0, "source", "source_ref", "source_id"],
        id="empty-id",
    ),
    pytest.param(
        [*C0, "source_ref", "source_id"],
        "x" * 257,
        "string_too_long",
        [*C0, "source", "source_ref", "source_id"],
        id="257-id",
    ),
    pytest.param(
        [*C0, "source_ref", "name"],
        ...,
        "missing",
        [*C0, "source", "source_ref", "name"],
        id="no-name",
    ),
    pytest.param(
        [*C0, "source_ref", "source_type"],
        "content",
        "extra_forbidden",
        [*C0, "source", "source_ref", "source_type"],
        id="source-type-key",
    ),
    pytest.param(
        C0,
        {
            "kind": "artifact",
            "artifact_ref": {
                "family": "handoff",
                "artifact_id": "handoff",
                "revision": 0,
            },
        },
        "greater_than_equal",
        [*C0, "artifact", "artifact_ref", "revision"],
        id="revision-0",
    ),
    pytest.param(
        C0,
        {
            "kind": "artifact",
            "artifact_ref": {
                "family": "handoff",
                "artifact_id": "handoff",
                "revision": "1",
            },
        },
        "int_type",
        [*C0, "artifact", "artifact_ref", "revision"],
        id="revision-string",
    ),
    pytest.param(
        C0,
        {
            "kind": "artifact",
            "artifact_ref": {"family": "skill", "artifact_id": "x", "revision": 1},
        },
        "enum",
        [*C0, "artifact", "artifact_ref", "family"],
        id="other-family",
    ),
    pytest.param(
        C0,
        {
            "kind": "artifact",
            "artifact_ref": {"family": "handoff", "artifact_id": "a b", "revision": 1},
        },
        "string_pattern_mismatch",
        [*C0, "artifact", "artifact_ref", "artifact_id"],
        id="artifact-id-space",
    ),
    pytest.param(
        [*D, "omissions"],
        [{"text": "t"}],
        "missing",
        [*D, "omissions", 0, "citation"],
        id="omission-no-citation-key",
    ),
    pytest.param(
        [*D, "generation"],
        {"receipt": ""},
        "string_too_short",
        [*D, "generation", "receipt"],
    ),
    pytest.param([*D, "extra"], 1, "extra_forbidden", [*D, "extra"], id="draft-extra"),
    pytest.param(["extra"], 1, "extra_forbidden", ["extra"], id="top-extra"),
    pytest.param(["scope_id"], 5, "string_type", ["scope_id"], id="scope-int"),
    pytest.param(["scope_id"], " ", "string_pattern_mismatch", ["scope_id"]),
    pytest.param(["scope_id"], "x" * 257, "string_too_long", ["scope_id"]),
    pytest.param(
        [*S0, "text"], "a\x00b", "string_unstorable", [*S0, "text"], id="nul-text"
    ),
    pytest.param(
        [*C0, "source_ref", "source_id"],
        "a\x00",
        "string_unstorable",
        [*C0, "source_ref", "source_id"],
        id="nul-id",
    ),
    pytest.param(
        C0,
        {
            "kind": "artifact",
            "artifact_ref": {
                "family": "handoff",
                "artifact_id": "handoff",
                "revision": 2**53,
            },
        },
        "number_unsupported",
        [*C0, "artifact_ref", "revision"],
        id="revision-2^53",
    ),
]


@pytest.mark.parametrize(("path", "value", "error_type", "loc"), FINALIZE_CASES)
def test_finalize_rejects_malformed_drafts(
    api: ApiClient, scope_id: str, path: list, value: Any, error_type: str, loc: list
) -> None:
    response = api.post(FINALIZE, mutated(finalize_body(scope_id), path, value))

    assert response.status_code == 422
    errors = error_of(response)["details"]["errors"]
    assert (errors[0]["type"], errors[0]["loc"]) == (error_type, ["body", *loc])


R0 = ["refs", 0]

RESOLVE_CASES = [
    pytest.param(["refs"], [], "too_short", ["refs"], id="0-refs"),
    pytest.param(
        ["refs"],
        [{"name": "content", "source_id": "c-1"}] * 257,
        "too_long",
        ["refs"],
        id="257-refs",
    ),
    pytest.param(["refs"], ..., "missing", ["refs"], id="no-refs"),
    pytest.param(["refs"], "c-1", "list_type", ["refs"], id="refs-string"),
    pytest.param(R0, "c-1", "dict_type", R0, id="ref-string"),
    pytest.param([*R0, "name"], "other", "enum", [*R0, "name"], id="other-name"),
    pytest.param([*R0, "source_id"], 1, "string_type", [*R0, "source_id"]),
    pytest.param([*R0, "source_id"], "c-1 ", "padded", [*R0, "source_id"]),
    pytest.param([*R0, "source_id"], "x" * 257, "string_too_long", [*R0, "source_id"]),
    pytest.param(
        [*R0, "content_digest"],
        "sha256:" + "A" * 64,
        "string_pattern_mismatch",
        [*R0, "content_digest"],
        id="digest-uppercase",
    ),
    pytest.param(
        [*R0, "content_digest"],
        "0" * 64,
        "string_pattern_mismatch",
        [*R0, "content_digest"],
        id="digest-no-prefix",
    ),
    pytest.param(
        [*R0, "content_digest"],
        7,
        "string_type",
        [*R0, "content_digest"],
        id="digest-int",
    ),
    pytest.param([*R0, "position"], 1, "extra_forbidden", [*R0, "position"]),
    pytest.param(["purpose"], "training", "enum", ["purpose"], id="bad-purpose"),
    pytest.param(["purpose"], ..., "missing", ["purpose"], id="no-purpose"),
    pytest.param(
        ["scope_id"], "x", "extra_forbidden", ["scope_id"], id="scope-in-body"
    ),
    pytest.param(
        [*R0, "source_id"],
        "\ud800",
        "string_unstorable",
        [*R0, "source_id"],
        id="surrogate",
    ),
    pytest.param(
        [*R0, "source_id"], 10**20, "number_unsupported", [*R0, "source_id"], id="1e20"
    ),
]


@pytest.mark.parametrize(("path", "value", "error_type", "loc"), RESOLVE_CASES)
def test_resolve_rejects_malformed_requests(
    api: ApiClient, scope_id: str, path: list, value: Any, error_type: str, loc: list
) -> None:
    response = api.post(
        resolve_url(scope_id), mutated(resolve_body(scope_id), path, value)
    )

    assert response.status_code == 422
    errors = error_of(response)["details"]["errors"]
    assert (errors[0]["type"], errors[0]["loc"]) == (error_type, ["body", *loc])


@pytest.mark.parametrize(
    ("scope", "error_type"),
    [
        pytest.param("%20", "string_pattern_mismatch", id="blank"),
        pytest.param("a%00b", "string_unstorable", id="nul"),
        pytest.param("x" * 257, "string_too_long", id="257"),
    ],
)
def test_resolve_rejects_bad_scope_paths(
    api: ApiClient, scope: str, error_type: str
) -> None:
    response = api.post(resolve_url(scope), resolve_body(scope))

    assert response.status_code == 422
    assert error_of(response)["details"]["errors"][0]["type"] == error_type


@pytest.mark.parametrize(
    ("raw", "error_type"),
    [
        pytest.param(b"{bad", "json_invalid", id="malformed"),
        pytest.param(b"[]", "dict_type", id="array"),
        pytest.param(b"null", "dict_type", id="null"),
        pytest.param(
            b'{"scope_id": 9007199254740993}', "number_unsupported", id="2^53+1"
        ),
        pytest.param(b'{"scope_id": NaN}', "json_invalid", id="nan"),
        pytest.param(b'{"scope_id": "a\\u0000"}', "string_unstorable", id="nul"),
        pytest.param(
            b'{"a":' * 50_000 + b"1" + b"}" * 50_000, "json_invalid", id="deep"
        ),
    ],
)
@pytest.mark.parametrize("url", URLS)
def test_unparseable_bodies_are_422(
    api: ApiClient, scope_id: str, url: str, raw: bytes, error_type: str
) -> None:
    response = api.post(url_for(url, scope_id), raw=raw)

    assert response.status_code == 422
    assert error_of(response)["details"]["errors"][0]["type"] == error_type


@pytest.mark.parametrize("url", URLS)
@pytest.mark.parametrize(
    "body",
    [
        pytest.param({}, id="empty"),
        pytest.param({"scope_id": {"$gt": ""}}, id="operator-object"),
        pytest.param({"scope_id": ["a"], "selection": 1, "draft": "d"}, id="types"),
        pytest.param({"scope_id": "s", "purpose": None, "refs": [None]}, id="nulls"),
    ],
)
def test_wrong_shapes_are_422_on_every_operation(
    api: ApiClient, scope_id: str, url: str, body: dict
) -> None:
    response = api.post(url_for(url, scope_id), body)

    assert response.status_code == 422
    assert error_of(response)["code"] == "invalid_request"


@pytest.mark.parametrize(
    ("url", "body"),
    [
        pytest.param(COMMIT, commit_body, id="commit"),
        pytest.param(FINALIZE, finalize_body, id="finalize"),
    ],
)
def test_schema_errors_are_reported_before_authorization(
    client_for: Callable[..., ApiClient],
    scope_id: str,
    url: str,
    body: Callable[[str], dict],
) -> None:
    stranger = client_for("scp_other:admin")

    invalid = stranger.post(url, {**body(scope_id), "extra": 1})
    valid = stranger.post(url, body(scope_id))

    assert invalid.status_code == 422
    assert valid.status_code == 403


@pytest.mark.parametrize("method", ["get", "put", "patch", "delete"])
@pytest.mark.parametrize("url", URLS)
def test_only_post_is_allowed(
    api: ApiClient, scope_id: str, url: str, method: str
) -> None:
    capture(api, scope_id, "c-1")

    response = getattr(api, method)(url_for(url, scope_id))

    assert response.status_code == 405
    assert error_of(response)["code"] == "method_not_allowed"
