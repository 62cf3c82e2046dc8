"""The HTTP edges of envelope routes: session ids in paths, bad input (never a
5xx), methods, statement budgets, index use, and the OpenAPI document."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from sessions_app.models import SessionEnvelope
from tests.conftest import ApiClient, error_of
from tests.sessions_app.conftest import envelope_row, session_path

pytestmark = pytest.mark.django_db

SUFFIXES = ["envelope", "working-notes", "working-notes/fold"]


# --- Session ids in the path -------------------------------------------------------------


@pytest.mark.parametrize(
    "session_id",
    [
        "a/b",
        "a/envelope",
        "x/working-notes",
        "x/working-notes/fold",
        "..",
        "../../scopes",
        "100%",
        "a%2Fb",
        "with space",
        "café",
        "Sess-7",
        " padded ",
        "s" * 256,
    ],
)
def test_any_legal_session_id_round_trips_through_every_route(
    api: ApiClient, scope_id: str, session_id: str
) -> None:
    written = api.patch(session_path(scope_id, session_id), {"meta": {"cwd": "/"}})
    notes = api.put(session_path(scope_id, session_id, "working-notes"), {"notes": "n"})
    read = api.get(session_path(scope_id, session_id))
    fold = api.get(session_path(scope_id, session_id, "working-notes/fold"))

    assert (written.status_code, notes.status_code, fold.status_code) == (201, 200, 200)
    assert read.json()["session_id"] == session_id
    assert read.json()["meta"] == {"cwd": "/", "workingNotes": "n"}
    assert SessionEnvelope.objects.get().session_id == session_id


def test_a_slash_may_be_sent_unencoded(api: ApiClient, scope_id: str) -> None:
    api.put(session_path(scope_id, "a/b"), {"meta": {"personaId": "p"}})

    response = api.get(f"/v1/scopes/{scope_id}/sessions/a/b/envelope")

    assert response.json()["session_id"] == "a/b"


def test_ids_differing_in_case_or_normalisation_are_different_sessions(
    api: ApiClient, scope_id: str
) -> None:
    for session_id in ("café", "cafe\u0301", "Café"):
        api.put(session_path(scope_id, session_id), {"meta": {"x-id": session_id}})

    assert SessionEnvelope.objects.count() == 3
    assert envelope_row(scope_id, "cafe\u0301").meta == {"x-id": "cafe\u0301"}


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize(
    ("session_id", "type_"),
    [
        (" ", "string_pattern_mismatch"),
        ("\t\n", "string_pattern_mismatch"),
        ("s" * 257, "string_too_long"),
        ("a\x00b", "string_unstorable"),
    ],
)
def test_an_illegal_session_id_is_422_on_the_path(
    api: ApiClient, scope_id: str, suffix: str, session_id: str, type_: str
) -> None:
    response = api.get(session_path(scope_id, session_id, suffix))

    assert response.status_code == 422
    [item] = error_of(response)["details"]["errors"]
    assert (item["type"], item["loc"]) == (type_, ["path", "session_id"])


@pytest.mark.parametrize(
    "path",
    [
        "/v1/scopes/{scope}/sessions//envelope",
        "/v1/scopes/{scope}/sessions/envelope",
        "/v1/scopes/{scope}/sessions/s/envelope/",
        "/v1/scopes/{scope}/sessions/s/working-notes/fold/",
        "/v1/scopes/{scope}/sessions/s",
        "/v1/scopes//sessions/s/envelope",
    ],
)
def test_paths_without_a_session_id_or_operation_are_404(
    api: ApiClient, scope_id: str, path: str
) -> None:
    response = api.get(path.format(scope=scope_id))

    assert response.status_code == 404
    assert error_of(response)["code"] == "not_found"


# --- Bad input never answers 5xx -----------------------------------------------------------


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
@pytest.mark.parametrize(
    ("raw", "loc", "type_"),
    [
        (b'{"meta": "x"}', ["body", "meta"], "dict_type"),
        (b'{"meta": null}', ["body", "meta"], "dict_type"),
        (b'{"meta": [1]}', ["body", "meta"], "dict_type"),
        (b"{}", ["body", "meta"], "missing"),
        (b'{"meta": {}, "extra": 1}', ["body", "extra"], "extra_forbidden"),
        (b"[1]", ["body"], "dict_type"),
        (b"{bad", ["body"], "json_invalid"),
        (b"", ["body", "meta"], "missing"),
        (
            b'{"meta": {"x-a": "a\\u0000"}}',
            ["body", "meta", "x-a"],
            "string_unstorable",
        ),
        (b'{"meta": {"\\ud800": 1}}', ["body", "meta", "\\ud800"], "string_unstorable"),
        (b'{"meta": {"x-a": 1e400}}', ["body", "meta", "x-a"], "number_unsupported"),
        (
            b'{"meta": {"turnCursor": 9007199254740992}}',
            ["body", "meta", "turnCursor"],
            "number_unsupported",
        ),
        (b'{"meta": {"a": 1, "a": 2}}', ["body"], "json_invalid"),
        (b'{"meta": {"x-a": NaN}}', ["body"], "json_invalid"),
    ],
)
def test_malformed_write_bodies_are_422_with_their_location(
    api: ApiClient, scope_id: str, method: str, raw: bytes, loc: list, type_: str
) -> None:
    response = api.request(method, session_path(scope_id), raw=raw)

    assert response.status_code == 422
    errors = error_of(response)["details"]["errors"]
    assert {"loc": loc, "type": type_} in [
        {"loc": e["loc"], "type": e["type"]} for e in errors
    ]
    assert not SessionEnvelope.objects.exists()


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("PUT", "envelope", {"meta": {"x-deep": [[[[{"a": [1]}]]]]}}),
        ("PATCH", "envelope", {"meta": {"cwd": {"nested": {"deeper": [1, 2]}}}}),
        ("PATCH", "envelope", {"meta": {"usage": "{" * 5000}}),
        ("PUT", "envelope", {"meta": {"attachedSkills": "[" * 100_000}}),
        ("PATCH", "envelope", {"meta": {"turnCursor": -(2**53 - 1)}}),
        ("PUT", "working-notes", {"notes": "\u200b" * 20000}),
    ],
)
def test_odd_but_parseable_values_get_a_4xx_never_a_5xx(
    api: ApiClient, scope_id: str, method: str, suffix: str, body: dict
) -> None:
    response = api.request(method, session_path(scope_id, suffix=suffix), body)

    assert 400 <= response.status_code < 500
    assert set(error_of(response)) == {"code", "message", "details"}


@pytest.mark.parametrize("suffix", ["envelope", "working-notes"])
def test_a_non_json_body_is_415(api: ApiClient, scope_id: str, suffix: str) -> None:
    response = api.put(
        session_path(scope_id, suffix=suffix), raw="meta=x", content_type="text/plain"
    )

    assert response.status_code == 415
    assert error_of(response)["code"] == "unsupported_media_type"


@pytest.mark.parametrize(
    ("method", "suffix"),
    [
        ("POST", "envelope"),
        ("DELETE", "envelope"),
        ("POST", "working-notes"),
        ("PATCH", "working-notes"),
        ("PUT", "working-notes/fold"),
        ("DELETE", "working-notes/fold"),
    ],
)
def test_unsupported_methods_are_405(
    api: ApiClient, scope_id: str, method: str, suffix: str
) -> None:
    response = api.request(method, session_path(scope_id, suffix=suffix), {})

    assert response.status_code == 405
    assert error_of(response)["code"] == "method_not_allowed"


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_every_route_answers_401_without_a_token(
    anon: ApiClient, scope_id: str, suffix: str
) -> None:
    response = anon.get(session_path(scope_id, suffix=suffix))

    assert response.status_code == 401


def test_401_comes_before_the_body_and_the_path(anon: ApiClient) -> None:
    response = anon.put(session_path("scp_x", " "), raw=b"{bad")

    assert response.status_code == 401


def test_422_comes_before_403(client_for: Any, scope_id: str) -> None:
    stranger = client_for("scp_other:admin")

    response = stranger.put(session_path(scope_id), {"meta": "x"})

    assert response.status_code == 422


# --- Statement budgets and indexes ---------------------------------------------------------


@pytest.fixture
def stored(warm_api: ApiClient, scope_id: str) -> str:
    warm_api.put(session_path(scope_id), {"meta": {"personaId": "p"}})
    warm_api.put(session_path(scope_id, suffix="working-notes"), {"notes": "n"})
    return scope_id


@pytest.mark.parametrize(
    ("suffix", "headers", "status"),
    [
        ("envelope", {}, 200),
        ("envelope", {"If-None-Match": '"2"'}, 304),
        ("working-notes", {}, 200),
        ("working-notes/fold", {}, 200),
    ],
)
def test_reads_are_one_query_after_authentication(
    warm_api: ApiClient,
    stored: str,
    assert_max_statements: Any,
    suffix: str,
    headers: dict,
    status: int,
) -> None:
    with assert_max_statements(2):  # the token with its grants, then the envelope
        response = warm_api.get(session_path(stored, suffix=suffix), headers=headers)

    assert response.status_code == status


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("PUT", "envelope", {"meta": {"personaId": "q"}}),
        ("PATCH", "envelope", {"meta": {"cwd": "/"}}),
        ("PUT", "working-notes", {"notes": "m"}),
        ("DELETE", "working-notes", None),
    ],
)
def test_a_write_is_a_handful_of_statements_in_one_transaction(
    warm_api: ApiClient,
    stored: str,
    assert_max_statements: Any,
    method: str,
    suffix: str,
    body: dict | None,
) -> None:
    # token; lock the row; previous digests; new values (notes); row; revision
    with assert_max_statements(6):
        response = warm_api.request(method, session_path(stored, suffix=suffix), body)

    assert response.status_code == 200


@pytest.mark.postgres
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_reads_use_the_identity_index(
    warm_api: ApiClient, stored: str, suffix: str
) -> None:
    with CaptureQueriesContext(connection) as captured:
        warm_api.get(session_path(stored, suffix=suffix))
    [sql] = [
        q["sql"]
        for q in captured.captured_queries
        if "sessions_app_sessionenvelope" in q["sql"]
    ]

    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + sql)
        plan = "\n".join(row[0] for row in cursor.fetchall())

    assert "sessions_envelope_identity_uniq" in plan, plan


# --- OpenAPI ---------------------------------------------------------------------------------


def test_the_openapi_document_lists_the_envelope_operations(anon: ApiClient) -> None:
    document = anon.get("/openapi.json").json()

    operations = {
        operation["operationId"]: (path, method)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    }
    base = "/v1/scopes/{scope_id}/sessions/{session_id}"
    assert {
        name: operations[name]
        for name in (
            "get_session_envelope",
            "replace_session_envelope",
            "patch_session_envelope",
            "get_working_notes",
            "put_working_notes",
            "delete_working_notes",
            "fold_working_notes",
        )
    } == {
        "get_session_envelope": (f"{base}/envelope", "get"),
        "replace_session_envelope": (f"{base}/envelope", "put"),
        "patch_session_envelope": (f"{base}/envelope", "patch"),
        "get_working_notes": (f"{base}/working-notes", "get"),
        "put_working_notes": (f"{base}/working-notes", "put"),
        "delete_working_notes": (f"{base}/working-notes", "delete"),
        "fold_working_notes": (f"{base}/working-notes/fold", "get"),
    }
