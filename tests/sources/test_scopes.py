"""Scopes through HTTP: create (idempotent), get, list with filters and cursors."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from sources.models import Scope, SourceJournalHead
from tests.conftest import ApiClient, create_scope, error_of

pytestmark = pytest.mark.django_db

SCOPE_ID = re.compile(r"^scp_[0-9a-hjkmnp-tv-z]{26}$")


def test_create_returns_the_descriptor(api: ApiClient) -> None:
    parent = create_scope(api, key="parent")
    other = create_scope(api, key="other")

    response = api.post(
        "/v1/scopes",
        {
            "title": "Child",
            "summary": "Child scope",
            "parent_scope_id": parent,
            "context_references": [other, parent],
            "external_references": [{"kind": "github", "value": "org/repo"}],
            "idempotency_key": "child",
        },
    )

    assert response.status_code == 201
    body = response.json()
    assert SCOPE_ID.match(body.pop("scope_id"))
    assert body == {
        "title": "Child",
        "summary": "Child scope",
        "parent_scope_id": parent,
        "context_references": [other, parent],
        "external_references": [{"kind": "github", "value": "org/repo"}],
        "version": 1,
    }


def test_create_writes_an_empty_journal_head(api: ApiClient) -> None:
    scope_id = create_scope(api)

    assert SourceJournalHead.objects.get(scope_id=scope_id).last_position == 0


def test_same_key_same_parameters_replays_the_same_scope(api: ApiClient) -> None:
    body = {"title": "T", "summary": "S", "idempotency_key": "same"}

    first = api.post("/v1/scopes", body)
    second = api.post("/v1/scopes", body)

    assert (first.status_code, second.status_code) == (201, 201)
    assert first.json() == second.json()
    assert Scope.objects.count() == 1


@pytest.mark.parametrize(
    "change",
    [
        {"title": "Other"},
        {"summary": "Other"},
        {"external_references": [{"kind": "k", "value": "v"}]},
    ],
)
def test_same_key_different_parameters_is_409(api: ApiClient, change: dict) -> None:
    body = {"title": "T", "summary": "S", "idempotency_key": "same"}
    api.post("/v1/scopes", body)

    response = api.post("/v1/scopes", {**body, **change})

    assert response.status_code == 409
    assert error_of(response)["code"] == "scope_idempotency_conflict"
    assert Scope.objects.count() == 1


def test_idempotency_keys_belong_to_their_principal(
    client_for: Callable[..., ApiClient],
) -> None:
    alice = client_for("*:contributor", name="alice")
    bob = client_for("*:contributor", name="bob")

    first = create_scope(alice, key="shared")
    second = create_scope(bob, key="shared")

    assert first != second


@pytest.mark.parametrize("field", ["parent_scope_id", "context_references"])
def test_unknown_referenced_scope_is_404(api: ApiClient, field: str) -> None:
    value = "scp_missing" if field == "parent_scope_id" else ["scp_missing"]

    response = api.post(
        "/v1/scopes",
        {"title": "T", "summary": "S", "idempotency_key": "k", field: value},
    )

    assert response.status_code == 404
    assert error_of(response)["code"] == "scope_not_found"
    assert Scope.objects.count() == 0


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"title": "  "}, ["body", "title"]),
        ({"title": "x" * 257}, ["body", "title"]),
        ({"summary": "x" * 2001}, ["body", "summary"]),
        ({"idempotency_key": ""}, ["body", "idempotency_key"]),
        ({"idempotency_key": "k" * 257}, ["body", "idempotency_key"]),
        ({"context_references": ["scp_a", "scp_a"]}, ["body", "context_references"]),
        ({"context_references": "scp_a"}, ["body", "context_references"]),
        (
            {"external_references": [{"kind": "k"}]},
            ["body", "external_references", 0, "value"],
        ),
        (
            {"external_references": [{"kind": "k", "value": "v", "x": 1}]},
            ["body", "external_references", 0, "x"],
        ),
        (
            {"external_references": [{"kind": "k", "value": "v"}] * 2},
            ["body", "external_references"],
        ),
        ({"parent_scope_id": 7}, ["body", "parent_scope_id"]),
    ],
)
def test_create_schema_errors(api: ApiClient, body: dict, loc: list) -> None:
    base = {"title": "T", "summary": "S", "idempotency_key": "k"}

    response = api.post("/v1/scopes", {**base, **body})

    assert response.status_code == 422
    assert loc in [e["loc"] for e in error_of(response)["details"]["errors"]]


@pytest.mark.parametrize(
    ("field", "item", "count"),
    [
        ("external_references", {"kind": "github", "value": "org/repo"}, 33_000),
        ("external_references", {"kind": "github", "value": "org/repo"}, 65),
        ("context_references", "scp_x", 65),
    ],
)
def test_lists_over_their_maximum_are_422_never_a_500(
    api: ApiClient, field: str, item: object, count: int
) -> None:
    """Regression: 33,000 external references overflowed a smallint
    ordinal and answered 500. Every list has a documented maximum of 64."""
    body = {"title": "t", "summary": "s", "idempotency_key": "k", field: [item] * count}

    response = api.post("/v1/scopes", body)

    assert response.status_code == 422
    (error,) = error_of(response)["details"]["errors"]
    assert (error["type"], error["loc"]) == ("too_long", ["body", field])
    assert not Scope.objects.exists()


def test_get_unknown_scope_is_404(api: ApiClient) -> None:
    response = api.get("/v1/scopes/scp_unknown")

    assert response.status_code == 404
    assert error_of(response)["code"] == "scope_not_found"


def test_get_returns_the_created_descriptor(api: ApiClient) -> None:
    created = api.post(
        "/v1/scopes",
        {
            "title": "T",
            "summary": "S",
            "idempotency_key": "k",
            "external_references": [
                {"kind": "a", "value": "1"},
                {"kind": "b", "value": "2"},
            ],
        },
    ).json()

    assert api.get(f"/v1/scopes/{created['scope_id']}").json() == created


def test_list_is_in_scope_id_order_with_a_cursor(api: ApiClient) -> None:
    created = sorted(create_scope(api, key=f"k{i}") for i in range(5))

    first = api.get("/v1/scopes", query={"limit": 2}).json()
    second = api.get(
        "/v1/scopes", query={"limit": 2, "cursor": first["next_cursor"]}
    ).json()
    third = api.get(
        "/v1/scopes", query={"limit": 2, "cursor": second["next_cursor"]}
    ).json()

    walked = [s["scope_id"] for page in (first, second, third) for s in page["items"]]
    assert walked == created
    assert third["next_cursor"] is None
    assert len(first["next_cursor"]) <= 512


def test_list_shows_only_scopes_the_caller_holds_a_grant_for(
    api: ApiClient, client_for: Callable[..., ApiClient]
) -> None:
    visible = create_scope(api, key="visible")
    create_scope(api, key="hidden")

    items = client_for(f"{visible}:viewer").get("/v1/scopes").json()["items"]

    assert [s["scope_id"] for s in items] == [visible]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"query": "Alpha", "query_field": "title"}, ["alpha"]),
        ({"query": "alpha", "query_field": "title"}, []),  # case-sensitive
        ({"query": "pha", "query_field": "title"}, ["alpha"]),
        ({"query": "about beta", "query_field": "summary"}, ["beta"]),
        ({"query": "org/", "query_field": "external_reference_value"}, ["alpha"]),
        ({"external_reference_kind": "jira"}, ["beta"]),
        ({"external_reference_kind": "nope"}, []),
    ],
)
def test_list_filters(api: ApiClient, query: dict, expected: list[str]) -> None:
    ids = {
        "alpha": create_scope(
            api,
            key="alpha",
            title="Alpha",
            summary="about alpha",
            external_references=[{"kind": "github", "value": "org/alpha"}],
        ),
        "beta": create_scope(
            api,
            key="beta",
            title="Beta",
            summary="about beta",
            external_references=[{"kind": "jira", "value": "B-1"}],
        ),
    }

    items = api.get("/v1/scopes", query=query).json()["items"]

    assert sorted(s["scope_id"] for s in items) == sorted(
        ids[name] for name in expected
    )


def test_list_filters_by_parent(api: ApiClient) -> None:
    parent = create_scope(api, key="p")
    child = create_scope(api, key="c", parent_scope_id=parent)
    create_scope(api, key="x")

    items = api.get("/v1/scopes", query={"parent_scope_id": parent}).json()["items"]

    assert [s["scope_id"] for s in items] == [child]


@pytest.mark.parametrize(
    ("query", "loc"),
    [
        ({"limit": "0"}, ["query", "limit"]),
        ({"limit": "101"}, ["query", "limit"]),
        ({"limit": "abc"}, ["query", "limit"]),
        ({"query": "x"}, ["query", "query_field"]),
        ({"query_field": "color", "query": "x"}, ["query", "query_field"]),
        ({"binding_integration": "github"}, ["query", "binding_integration"]),
        ({"binding_kind": "repo"}, ["query", "binding_kind"]),
        (
            {"query": "x", "query_field": "binding_external_id"},
            ["query", "query_field"],
        ),
        ({"unknown": "1"}, ["query", "unknown"]),
        ({"cursor": "x" * 4097}, ["query", "cursor"]),
    ],
)
def test_list_query_errors_are_422(api: ApiClient, query: dict, loc: list) -> None:
    response = api.get("/v1/scopes", query=query)

    assert response.status_code == 422
    assert loc in [e["loc"] for e in error_of(response)["details"]["errors"]]


@pytest.mark.parametrize(
    "query",
    [
        {"binding_integration": "github"},
        {"binding_kind": "repo"},
        {"query": "x", "query_field": "binding_external_id"},
    ],
)
def test_binding_filters_are_unsupported_filter_as_documented(
    api: ApiClient, query: dict
) -> None:
    """docs/api.md (the scope list's filters) and docs/migrating.md: the reference's
    binding filters are ``422 invalid_request`` with error type
    ``unsupported_filter``: this service has no scope bindings."""
    response = api.get("/v1/scopes", query=query)

    assert response.status_code == 422
    assert error_of(response)["code"] == "invalid_request"
    assert [e["type"] for e in error_of(response)["details"]["errors"]] == [
        "unsupported_filter"
    ]


def test_tampered_cursor_is_400_invalid_cursor(api: ApiClient) -> None:
    for i in range(3):
        create_scope(api, key=f"k{i}")
    cursor = api.get("/v1/scopes", query={"limit": 1}).json()["next_cursor"]
    tampered = cursor[:-2] + ("AA" if not cursor.endswith("AA") else "BB")

    response = api.get("/v1/scopes", query={"limit": 1, "cursor": tampered})

    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_cursor"


def test_cursor_from_another_filter_is_400(api: ApiClient) -> None:
    for i in range(3):
        create_scope(api, key=f"k{i}", title="Same")
    cursor = api.get("/v1/scopes", query={"limit": 1}).json()["next_cursor"]

    response = api.get(
        "/v1/scopes",
        query={"limit": 1, "cursor": cursor, "query": "Same", "query_field": "title"},
    )

    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_cursor"


def test_old_cursor_is_410_cursor_expired(api: ApiClient, settings) -> None:
    for i in range(3):
        create_scope(api, key=f"k{i}")
    cursor = api.get("/v1/scopes", query={"limit": 1}).json()["next_cursor"]

    with time_machine.travel(
        timezone.now() + timedelta(seconds=settings.POWERCONTEXT_CURSOR_TTL + 5)
    ):
        response = api.get("/v1/scopes", query={"limit": 1, "cursor": cursor})

    assert response.status_code == 410
    assert error_of(response)["code"] == "cursor_expired"


# --- The default scope ------------------------------------------------------------------


def test_default_scope_is_created_once_per_principal(
    client_for: Callable[..., ApiClient],
) -> None:
    alice = client_for("*:contributor", name="alice")
    alice_again = client_for("*:contributor", name="alice")
    bob = client_for("*:contributor", name="bob")

    first = alice.get("/v1/scopes/default")
    again = alice_again.get("/v1/scopes/default")
    other = bob.get("/v1/scopes/default")

    assert first.status_code == again.status_code == other.status_code == 200
    body = dict(first.json())
    assert SCOPE_ID.match(body.pop("scope_id"))
    assert body == {
        "title": "Default",
        "summary": "Default context",
        "parent_scope_id": None,
        "context_references": [],
        "external_references": [],
        "version": 1,
    }
    assert again.json() == first.json()
    assert other.json()["scope_id"] != first.json()["scope_id"]
    assert Scope.objects.filter(created_by="alice").count() == 1
    assert alice.get(f"/v1/scopes/{first.json()['scope_id']}").status_code == 200
    assert SourceJournalHead.objects.filter(scope_id=other.json()["scope_id"]).exists()


def test_default_scope_is_listed_and_takes_captures(api: ApiClient) -> None:
    scope_id = api.get("/v1/scopes/default").json()["scope_id"]

    captured = api.post(
        "/v1/sources/content",
        {"scope_id": scope_id, "source_id": "c-1", "content": "x"},
    )

    assert captured.status_code == 202
    listed = api.get("/v1/scopes").json()["items"]
    assert [item["scope_id"] for item in listed] == [scope_id]


def test_default_scope_needs_a_star_grant_to_be_created(
    client_for: Callable[..., ApiClient],
) -> None:
    response = client_for("*:viewer", name="viewer").get("/v1/scopes/default")

    assert response.status_code == 403
    assert not Scope.objects.exists()


def test_create_scope_refuses_the_default_scopes_key(api: ApiClient) -> None:
    response = api.post(
        "/v1/scopes",
        {"title": "T", "summary": "S", "idempotency_key": "powercontext:default-scope"},
    )

    assert response.status_code == 422
    assert error_of(response)["details"] == {
        "field": "idempotency_key",
        "reason": "reserved",
    }
    assert not Scope.objects.exists()
