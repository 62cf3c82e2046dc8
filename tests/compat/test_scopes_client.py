"""The reference client (powercontext[client]==1.4.1) against our scope operations."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.compat,
    pytest.mark.django_db(transaction=True),
]

REQUEST_ID = re.compile(r"^[0-9a-f]{16}$")


def test_client_creates_lists_and_reads_scopes(
    reference_client: Callable, make_token: Callable[..., str]
) -> None:
    token = make_token("*:admin")
    create = {
        "title": "Compat",
        "summary": "Made by the reference client",
        "idempotency_key": "c1",
    }

    results = reference_client(
        token,
        [
            {"op": "create_scope", "request": create},
            {"op": "create_scope", "request": create},
            {"op": "get_scope", "args": ["$0.scope_id"]},
            {"op": "list_scopes"},
            {
                "op": "list_scopes",
                "kwargs": {"query": "Compat", "query_field": "title", "limit": 10},
            },
        ],
    )

    created = results[0]["ok"]
    assert results[1]["ok"] == created
    assert results[2]["ok"] == created
    assert results[3]["ok"]["items"] == [created]
    assert results[4]["ok"]["items"] == [created]


def test_client_pages_through_scopes(
    reference_client: Callable, make_token: Callable[..., str]
) -> None:
    token = make_token("*:admin")
    steps = [
        {
            "op": "create_scope",
            "request": {"title": f"S{i}", "summary": "s", "idempotency_key": f"k{i}"},
        }
        for i in range(3)
    ]
    steps += [
        {"op": "list_scopes", "kwargs": {"limit": 2}},
        {"op": "list_scopes", "kwargs": {"limit": 2, "cursor": "$3.next_cursor"}},
    ]

    results = reference_client(token, steps)

    walked = [s["scope_id"] for r in results[3:] for s in r["ok"]["items"]]
    assert sorted(walked) == sorted(r["ok"]["scope_id"] for r in results[:3])
    assert results[4]["ok"]["next_cursor"] is None


@pytest.mark.parametrize(
    ("token_grants", "op", "args", "error_type", "status", "code"),
    [
        (None, "list_scopes", [], "UnauthorizedResponseError", 401, "unauthorized"),
        (
            ("scp_other:viewer",),
            "get_scope",
            ["scp_nope"],
            "ForbiddenResponseError",
            403,
            "forbidden",
        ),
        (
            ("*:viewer",),
            "get_scope",
            ["scp_nope"],
            "ServerResponseError",
            404,
            "scope_not_found",
        ),
    ],
)
def test_client_gets_typed_errors_with_request_ids(
    reference_client: Callable,
    make_token: Callable[..., str],
    token_grants: tuple[str, ...] | None,
    op: str,
    args: list,
    error_type: str,
    status: int,
    code: str,
) -> None:
    token = None if token_grants is None else make_token(*token_grants)

    (result,) = reference_client(token, [{"op": op, "args": args}])

    error = result["error"]
    assert (error["type"], error["status_code"], error["code"]) == (
        error_type,
        status,
        code,
    )
    assert REQUEST_ID.match(error["request_id"])


def test_client_sees_409_on_scope_key_reuse(
    reference_client: Callable, make_token: Callable[..., str]
) -> None:
    token = make_token("*:admin")

    results = reference_client(
        token,
        [
            {
                "op": "create_scope",
                "request": {"title": "A", "summary": "s", "idempotency_key": "same"},
            },
            {
                "op": "create_scope",
                "request": {"title": "B", "summary": "s", "idempotency_key": "same"},
            },
        ],
    )

    assert results[1]["error"]["code"] == "scope_idempotency_conflict"
    assert results[1]["error"]["status_code"] == 409
