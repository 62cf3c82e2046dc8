"""Reading Sources through HTTP (api.md 6, 6.2): get, list, create, generation window."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from urllib.parse import quote

import pytest
import time_machine
from django.utils import timezone

from sources.models import ContentSource
from tests.conftest import ApiClient, error_of

pytestmark = pytest.mark.django_db

RECORD_KEYS = [
    "receipt_identity",
    "scope_id",
    "source_type",
    "source_id",
    "content",
    "position",
    "content_digest",
]


def put(api: ApiClient, scope_id: str, source_id: str, content: str = "c") -> None:
    response = api.post(
        "/v1/sources/content",
        {"scope_id": scope_id, "source_id": source_id, "content": content},
    )
    assert response.status_code == 202, response.content


def put_note(api: ApiClient, scope_id: str, source_id: str, **fields: Any) -> None:
    body = {
        "scope_id": scope_id,
        "source_id": source_id,
        "content": "n",
        "session_id": "s",
        "note_kind": "inspection",
        **fields,
    }
    assert api.post("/v1/sources/working-notes", body).status_code == 202


def source_url(scope_id: str, source_id: str) -> str:
    return f"/v1/scopes/{scope_id}/sources/content/{quote(source_id, safe='')}"


def test_get_returns_exactly_the_source_record(api: ApiClient, scope_id: str) -> None:
    put(api, scope_id, "c1", "hello")

    response = api.get(source_url(scope_id, "c1"))

    assert response.status_code == 200
    body = response.json()
    assert list(body) == RECORD_KEYS
    assert body == {
        "receipt_identity": None,
        "scope_id": scope_id,
        "source_type": "content",
        "source_id": "c1",
        "content": "hello",
        "position": 1,
        "content_digest": "sha256:" + hashlib.sha256(b'"hello"').hexdigest(),
    }


@pytest.mark.parametrize(
    "source_id",
    [
        "a/b",
        "../x",
        "..",
        ".",
        "x/",
        "/y",
        "%2F",
        "a%b",
        "a b",
        "a+b",
        "a?b",
        "a#b",
        "caf\u00e9",
        "\U0001f600/\u00e9",
        "a//b",
    ],
)
def test_ids_with_reserved_characters_round_trip(
    api: ApiClient, scope_id: str, source_id: str
) -> None:
    put(api, scope_id, source_id)

    response = api.get(source_url(scope_id, source_id))

    assert response.status_code == 200
    assert response.json()["source_id"] == source_id


def test_identity_is_byte_exact_on_reads(api: ApiClient, scope_id: str) -> None:
    put(api, scope_id, "caf\u00e9")

    assert api.get(source_url(scope_id, "cafe\u0301")).status_code == 404
    assert api.get(source_url(scope_id, "CAF\u00c9")).status_code == 404


@pytest.mark.parametrize(
    ("path", "loc", "type_"),
    [
        ("/v1/scopes/{scope}/sources/note/x", ["path", "source_type"], "enum"),
        ("/v1/scopes/{scope}/sources/Content/x", ["path", "source_type"], "enum"),
        (
            "/v1/scopes/{scope}/sources/content/%20",
            ["path", "source_id"],
            "string_pattern_mismatch",
        ),
        ("/v1/scopes/{scope}/sources/content/%20a", ["path", "source_id"], "padded"),
        (
            "/v1/scopes/{scope}/sources/content/" + "x" * 257,
            ["path", "source_id"],
            "string_too_long",
        ),
        (
            "/v1/scopes/{scope}/sources/content/a%00b",
            ["path", "source_id"],
            "string_unstorable",
        ),
        (
            "/v1/scopes/%20/sources/content/x",
            ["path", "scope_id"],
            "string_pattern_mismatch",
        ),
    ],
)
def test_bad_path_parameters_are_422(
    api: ApiClient, scope_id: str, path: str, loc: list, type_: str
) -> None:
    response = api.get(path.format(scope=scope_id))

    assert response.status_code == 422
    assert {"type": type_, "loc": loc} in [
        {"type": e["type"], "loc": e["loc"]}
        for e in error_of(response)["details"]["errors"]
    ]


def test_unknown_source_and_unknown_scope_are_distinct_404s(
    api: ApiClient, scope_id: str
) -> None:
    missing_source = api.get(source_url(scope_id, "nope"))
    missing_scope = api.get(source_url("scp_nope", "nope"))

    assert error_of(missing_source)["code"] == "source_not_found"
    assert error_of(missing_scope)["code"] == "scope_not_found"


def test_reading_needs_a_grant_on_the_scope(
    api: ApiClient, client_for: Callable[..., ApiClient], scope_id: str
) -> None:
    put(api, scope_id, "c1")

    assert (
        client_for("scp_other:admin").get(source_url(scope_id, "c1")).status_code == 403
    )
    assert (
        client_for(f"{scope_id}:viewer").get(source_url(scope_id, "c1")).status_code
        == 200
    )


def test_get_stays_within_its_statement_budget(
    api: ApiClient, scope_id: str, assert_max_statements: Callable[[int], Any]
) -> None:
    put(api, scope_id, "c1")

    with assert_max_statements(3):
        assert api.get(source_url(scope_id, "c1")).status_code == 200
    with assert_max_statements(3):
        assert api.get(source_url(scope_id, "missing")).status_code == 404


# --- list_sources ----------------------------------------------------------------


def test_list_is_ascending_and_includes_notes_expired_or_not(
    api: ApiClient, scope_id: str
) -> None:
    put(api, scope_id, "a")
    put_note(
        api,
        scope_id,
        "n1",
        expires_at=(timezone.now() + timedelta(hours=1)).isoformat(),
    )
    put(api, scope_id, "b")

    with time_machine.travel(timezone.now() + timedelta(days=1)):
        body = api.get(f"/v1/scopes/{scope_id}/sources").json()

    assert [item["source_id"] for item in body["items"]] == ["a", "n1", "b"]
    assert [item["position"] for item in body["items"]] == [1, 2, 3]
    assert body["next_cursor"] is None
    assert all(list(item) == RECORD_KEYS for item in body["items"])


def test_default_page_is_50(api: ApiClient, scope_id: str) -> None:
    for i in range(55):
        put(api, scope_id, f"s{i}")

    body = api.get(f"/v1/scopes/{scope_id}/sources").json()

    assert len(body["items"]) == 50
    assert isinstance(body["next_cursor"], str)
    assert len(body["next_cursor"]) <= 512


def test_exactly_limit_remaining_gives_no_next_cursor(
    api: ApiClient, scope_id: str
) -> None:
    for i in range(4):
        put(api, scope_id, f"s{i}")

    assert (
        api.get(f"/v1/scopes/{scope_id}/sources", query={"limit": 4}).json()[
            "next_cursor"
        ]
        is None
    )


def test_a_walk_is_a_snapshot(api: ApiClient, scope_id: str) -> None:
    for i in range(5):
        put(api, scope_id, f"before{i}")
    first = api.get(f"/v1/scopes/{scope_id}/sources", query={"limit": 2}).json()
    for i in range(3):
        put(api, scope_id, f"during{i}")

    walked = [item["source_id"] for item in first["items"]]
    cursor = first["next_cursor"]
    while cursor:
        page = api.get(
            f"/v1/scopes/{scope_id}/sources", query={"limit": 2, "cursor": cursor}
        ).json()
        walked += [item["source_id"] for item in page["items"]]
        cursor = page["next_cursor"]

    assert walked == [f"before{i}" for i in range(5)]
    fresh = api.get(f"/v1/scopes/{scope_id}/sources").json()["items"]
    assert len(fresh) == 8


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ({"limit": "0"}, 400),
        ({"limit": "-1"}, 400),
        ({"limit": "101"}, 400),
        ({"limit": "abc"}, 400),
        ({"limit": ""}, 400),
        ({"cursor": ""}, 400),
        ({"foo": "1"}, 422),
        ({"LIMIT": "1"}, 422),
    ],
)
def test_list_query_errors(
    api: ApiClient, scope_id: str, query: dict, status: int
) -> None:
    response = api.get(f"/v1/scopes/{scope_id}/sources", query=query)

    assert response.status_code == status
    assert error_of(response)["code"] == "invalid_request"


def test_repeated_query_key_is_422(api: ApiClient, scope_id: str) -> None:
    response = api.get(f"/v1/scopes/{scope_id}/sources?limit=1&limit=2")

    assert response.status_code == 422


def test_cursor_errors(api: ApiClient, settings: Any) -> None:
    from tests.conftest import create_scope

    scope_a, scope_b = create_scope(api, key="a"), create_scope(api, key="b")
    for i in range(3):
        put(api, scope_a, f"s{i}")
    cursor = api.get(f"/v1/scopes/{scope_a}/sources", query={"limit": 1}).json()[
        "next_cursor"
    ]
    scope_cursor = None
    for i in range(2):
        create_scope(api, key=f"x{i}")
    scope_cursor = api.get("/v1/scopes", query={"limit": 1}).json()["next_cursor"]

    tampered = api.get(
        f"/v1/scopes/{scope_a}/sources", query={"cursor": cursor[:-3] + "xyz"}
    )
    foreign_scope = api.get(f"/v1/scopes/{scope_b}/sources", query={"cursor": cursor})
    foreign_list = api.get(
        f"/v1/scopes/{scope_a}/sources", query={"cursor": scope_cursor}
    )
    with time_machine.travel(
        timezone.now() + timedelta(seconds=settings.POWERCONTEXT_CURSOR_TTL + 1)
    ):
        expired = api.get(f"/v1/scopes/{scope_a}/sources", query={"cursor": cursor})

    assert [
        r.status_code for r in (tampered, foreign_scope, foreign_list, expired)
    ] == [
        400,
        400,
        400,
        410,
    ]
    assert error_of(tampered)["code"] == "invalid_cursor"
    assert error_of(expired)["code"] == "cursor_expired"


def test_list_unknown_scope_is_404(api: ApiClient) -> None:
    response = api.get("/v1/scopes/scp_nope/sources")

    assert error_of(response)["code"] == "scope_not_found"


def test_list_stays_within_its_statement_budget(
    api: ApiClient, scope_id: str, assert_max_statements: Callable[[int], Any]
) -> None:
    for i in range(3):
        put(api, scope_id, f"s{i}")

    with assert_max_statements(3):
        first = api.get(f"/v1/scopes/{scope_id}/sources", query={"limit": 2}).json()
    with assert_max_statements(3):
        api.get(
            f"/v1/scopes/{scope_id}/sources",
            query={"limit": 2, "cursor": first["next_cursor"]},
        )


# --- create_source ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "stored"),
    [
        ("hello", "hello"),
        (
            {"b": 1, "a": [1.0, {"z": None, "y": 1.5}]},
            {"a": [1, {"y": 1.5, "z": None}], "b": 1},
        ),
        (42, 42),
        (None, None),
        (True, True),
        ([], []),
        ({"kind": "working_note"}, {"kind": "working_note"}),
        ("x" * 300_000, "x" * 300_000),
    ],
)
def test_create_source_assigns_an_id_and_answers_201(
    api: ApiClient, scope_id: str, content: Any, stored: Any
) -> None:
    response = api.post(f"/v1/scopes/{scope_id}/sources", {"content": content})

    assert response.status_code == 201
    body = response.json()
    assert re.fullmatch(r"src_[0-9a-f]{32}", body["source_id"])
    assert body["content"] == stored
    assert (
        response["Location"]
        == f"/v1/scopes/{scope_id}/sources/content/{body['source_id']}"
    )
    assert api.get(response["Location"]).json() == body
    row = ContentSource.objects.get(source_id=body["source_id"])
    assert row.is_working_note is False


def test_create_source_is_not_idempotent(api: ApiClient, scope_id: str) -> None:
    first = api.post(f"/v1/scopes/{scope_id}/sources", {"content": "same"}).json()
    second = api.post(f"/v1/scopes/{scope_id}/sources", {"content": "same"}).json()

    assert (first["position"], second["position"]) == (1, 2)
    assert first["source_id"] != second["source_id"]


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"content": ""}, 422),
        ({"content": "   "}, 422),
        ({}, 422),
        ({"content": "x", "source_type": "note"}, 422),
        ({"content": "x", "source_id": "mine"}, 422),
        ({"content": {"schema": "powercontext.handoff-receipt.v1"}}, 422),
        ({"content": '{"schema": "powercontext.handoff-receipt.v1"}'}, 422),
    ],
)
def test_create_source_rejections(
    api: ApiClient, scope_id: str, body: dict, status: int
) -> None:
    response = api.post(f"/v1/scopes/{scope_id}/sources", body)

    assert response.status_code == status
    assert not ContentSource.objects.exists()


def test_create_source_in_unknown_scope_is_404(api: ApiClient) -> None:
    response = api.post("/v1/scopes/scp_nope/sources", {"content": "x"})

    assert error_of(response)["code"] == "scope_not_found"


# --- generation window -------------------------------------------------------------


def test_window_skips_notes_and_advances_past_them(
    api: ApiClient, scope_id: str
) -> None:
    put(api, scope_id, "p1")  # 1
    put_note(api, scope_id, "n1")  # 2
    put(api, scope_id, "p2")  # 3
    put_note(api, scope_id, "n2")  # 4
    put_note(api, scope_id, "n3")  # 5

    first = api.get(f"/v1/scopes/{scope_id}/sources/window", query={"limit": 1}).json()
    second = api.get(
        f"/v1/scopes/{scope_id}/sources/window",
        query={"after": first["next_after"], "limit": 1},
    ).json()
    third = api.get(
        f"/v1/scopes/{scope_id}/sources/window",
        query={"after": second["next_after"], "limit": 1},
    ).json()

    assert [i["source_id"] for i in first["items"]] == ["p1"]
    assert (first["next_after"], first["high_watermark"]) == (1, 5)
    assert [i["source_id"] for i in second["items"]] == ["p2"]
    assert second["next_after"] == 3
    assert third == {"items": [], "next_after": 5, "high_watermark": 5}


def test_window_of_a_notes_only_scope_is_empty_at_the_watermark(
    api: ApiClient, scope_id: str
) -> None:
    put_note(api, scope_id, "n1")
    put_note(api, scope_id, "n2")

    body = api.get(f"/v1/scopes/{scope_id}/sources/window").json()

    assert body == {"items": [], "next_after": 2, "high_watermark": 2}


def test_window_short_page_jumps_to_the_watermark(
    api: ApiClient, scope_id: str
) -> None:
    put(api, scope_id, "p1")
    put_note(api, scope_id, "n1")

    body = api.get(f"/v1/scopes/{scope_id}/sources/window", query={"limit": 5}).json()

    assert [i["source_id"] for i in body["items"]] == ["p1"]
    assert body["next_after"] == 2


@pytest.mark.parametrize(
    "query", [{"after": "-1"}, {"limit": "0"}, {"limit": "101"}, {"after": "x"}]
)
def test_window_query_errors_are_400(
    api: ApiClient, scope_id: str, query: dict
) -> None:
    assert (
        api.get(f"/v1/scopes/{scope_id}/sources/window", query=query).status_code == 400
    )


def test_window_stays_within_its_statement_budget(
    api: ApiClient, scope_id: str, assert_max_statements: Callable[[int], Any]
) -> None:
    put(api, scope_id, "p1")

    with assert_max_statements(3):
        assert api.get(f"/v1/scopes/{scope_id}/sources/window").status_code == 200


@pytest.mark.parametrize(
    "path",
    [
        "sources",
        "source-audit?working_note=true&session_id=sess-1&note_kind=inspection",
        "source-attempts/content/n-1",
    ],
)
def test_cursors_stay_within_512_characters(
    api: ApiClient, scope_id: str, path: str
) -> None:
    """The longest legal request line counts on it (powercontext/api/wsgi_head.py)."""
    for source_id in ("n-1", "n-2", "n-3", "n-1", "n-1"):  # n-1: three attempts
        api.post(
            "/v1/sources/working-notes",
            {
                "scope_id": scope_id,
                "source_id": source_id,
                "content": "a note",
                "session_id": "sess-1",
                "note_kind": "inspection",
            },
        )
    separator = "&" if "?" in path else "?"

    body = api.get(f"/v1/scopes/{scope_id}/{path}{separator}limit=1").json()

    assert 0 < len(body["next_cursor"]) <= 512
