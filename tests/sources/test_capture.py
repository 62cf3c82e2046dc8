"""Capture through HTTP (api.md 5, 5.1, 5.3): receipts, replay, conflict, rules, attempts."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import pytest

from sources.models import CaptureAttempt, ContentSource, SourceJournalHead
from tests.conftest import ApiClient, create_scope, error_of

pytestmark = pytest.mark.django_db

CAPTURE = "/v1/sources/content"


def capture(api: ApiClient, scope_id: str, source_id: str = "c1", **fields: Any) -> Any:
    body = {"scope_id": scope_id, "source_id": source_id, "content": "hello", **fields}
    return api.post(CAPTURE, body)


def outcomes(scope_id: str, source_id: str) -> list[tuple[str, str | None]]:
    return list(
        CaptureAttempt.objects.filter(scope_id=scope_id, source_id=source_id)
        .order_by("id")
        .values_list("outcome", "reason")
    )


def test_first_capture_answers_the_receipt_and_stores_the_row(
    api: ApiClient, scope_id: str
) -> None:
    response = capture(api, scope_id, metadata={"b": 1, "a": {"y": 2}})

    assert response.status_code == 202
    assert response.json() == {
        "status": "accepted",
        "source": {"name": "content", "source_id": "c1"},
        "position": 1,
    }
    assert "Idempotent-Replayed" not in response
    row = ContentSource.objects.get(scope_id=scope_id, source_id="c1")
    assert (row.content, row.metadata, row.is_working_note) == (
        '"hello"',
        {"b": 1, "a": {"y": 2}},
        False,
    )
    assert row.content_digest == "sha256:" + hashlib.sha256(b'"hello"').hexdigest()
    assert row.request_id == response["X-PowerContext-Request-ID"]
    assert row.created_by == "root"
    assert outcomes(scope_id, "c1") == [("accepted", None)]


def test_exact_replay_returns_the_original_receipt(
    api: ApiClient, scope_id: str
) -> None:
    first = capture(api, scope_id, metadata={"b": 1, "a": [1, 2]})
    capture(api, scope_id, source_id="other")

    replay = capture(api, scope_id, metadata={"a": [1.0, 2], "b": 1})

    assert replay.status_code == 202
    assert replay.json() == first.json()
    assert replay["Idempotent-Replayed"] == "true"
    assert ContentSource.objects.filter(scope_id=scope_id).count() == 2
    assert outcomes(scope_id, "c1") == [("accepted", None), ("replayed", None)]


@pytest.mark.parametrize(
    ("first", "again"),
    [
        pytest.param({}, {"metadata": None}, id="omitted-vs-null"),
        pytest.param({"metadata": {}}, {}, id="empty-vs-omitted"),
        pytest.param({"metadata": {"n": 1}}, {"metadata": {"n": 1.0}}, id="1-vs-1.0"),
        pytest.param({"metadata": {"n": 10}}, {"metadata": {"n": 1e1}}, id="10-vs-1e1"),
        pytest.param({"metadata": {"n": -0.0}}, {"metadata": {"n": 0}}, id="-0-vs-0"),
        pytest.param(
            {"metadata": {"a": 1, "b": {"c": 2, "d": 3}}},
            {"metadata": {"b": {"d": 3, "c": 2}, "a": 1}},
            id="key-order",
        ),
    ],
)
def test_equal_values_replay(
    api: ApiClient, scope_id: str, first: dict, again: dict
) -> None:
    capture(api, scope_id, **first)

    response = capture(api, scope_id, **again)

    assert response.status_code == 202
    assert response["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize(
    ("first", "again"),
    [
        pytest.param({"metadata": {"n": 1}}, {"metadata": {"n": True}}, id="1-vs-true"),
        pytest.param(
            {"metadata": {"n": 0}}, {"metadata": {"n": False}}, id="0-vs-false"
        ),
        pytest.param({"metadata": {"n": 1}}, {"metadata": {"n": "1"}}, id="1-vs-'1'"),
        pytest.param(
            {"metadata": {"l": [1, 2]}}, {"metadata": {"l": [2, 1]}}, id="list-order"
        ),
        pytest.param(
            {"metadata": {"x": None}}, {"metadata": {"x": {}}}, id="null-vs-{}"
        ),
        pytest.param({"metadata": {"x": 1}}, {}, id="metadata-dropped"),
        pytest.param({}, {"content": "hello!"}, id="content"),
        pytest.param({}, {"content": "Hello"}, id="case"),
        pytest.param({}, {"content": "hello "}, id="trailing-space"),
        pytest.param(
            {"content": "caf\u00e9"}, {"content": "cafe\u0301"}, id="nfc-vs-nfd"
        ),
    ],
)
def test_different_values_conflict_and_write_nothing(
    api: ApiClient, scope_id: str, first: dict, again: dict
) -> None:
    capture(api, scope_id, **first)

    response = capture(api, scope_id, **again)

    assert response.status_code == 409
    error = error_of(response)
    assert (error["code"], error["details"]) == ("source_conflict", None)
    assert ContentSource.objects.filter(scope_id=scope_id).count() == 1
    assert outcomes(scope_id, "c1")[-1] == ("conflict", "source_conflict")


def test_conflicts_and_rejections_consume_no_position(
    api: ApiClient, scope_id: str
) -> None:
    capture(api, scope_id, source_id="a")
    capture(api, scope_id, source_id="a", content="different")
    capture(api, scope_id, source_id="r", metadata={"kind": "working_note"})
    api.post(
        "/v1/sources/working-notes",
        {
            "scope_id": scope_id,
            "source_id": "late",
            "content": "x",
            "session_id": "s",
            "note_kind": "inspection",
            "expires_at": "2000-01-01T00:00:00Z",
        },
    )

    response = capture(api, scope_id, source_id="b")

    assert response.json()["position"] == 2
    assert SourceJournalHead.objects.get(scope_id=scope_id).last_position == 2


def test_positions_are_per_scope(api: ApiClient) -> None:
    first, second = create_scope(api, key="one"), create_scope(api, key="two")

    positions = [
        capture(api, scope, source_id=f"s{i}").json()["position"]
        for i, scope in enumerate([first, second, first, second, second])
    ]

    assert positions == [1, 1, 2, 2, 3]


def test_same_source_id_in_two_scopes_is_two_sources(api: ApiClient) -> None:
    first, second = create_scope(api, key="one"), create_scope(api, key="two")

    capture(api, first, content="one")
    response = capture(api, second, content="two")

    assert response.status_code == 202
    assert ContentSource.objects.filter(source_id="c1").count() == 2


@pytest.mark.parametrize(
    "content",
    [
        '{"schema": "powercontext.handoff-receipt.v1"}',
        '  { "schema" : "powercontext.handoff-receipt.v1", "x": 1 } ',
    ],
)
def test_reserved_receipt_schema_is_rejected(
    api: ApiClient, scope_id: str, content: str
) -> None:
    response = capture(api, scope_id, content=content)

    assert response.status_code == 422
    assert error_of(response)["details"] == {
        "field": "content",
        "reason": "uses a server-reserved handoff receipt schema",
    }
    assert not ContentSource.objects.exists()
    assert outcomes(scope_id, "c1") == [("rejected", "reserved_schema")]


@pytest.mark.parametrize(
    "content",
    [
        '{"schema": "powercontext.handoff-receipt.v2"}',
        '[{"schema": "powercontext.handoff-receipt.v1"}]',
        '{"schema": "powercontext.something.v1"}',
        "[" * 5000,
    ],
)
def test_content_near_the_reserved_schema_is_accepted(
    api: ApiClient, scope_id: str, content: str
) -> None:
    assert capture(api, scope_id, content=content).status_code == 202


def test_reserved_working_note_kind_is_rejected(api: ApiClient, scope_id: str) -> None:
    response = capture(api, scope_id, metadata={"kind": "working_note", "x": 1})

    assert response.status_code == 422
    error = error_of(response)
    assert error["details"]["field"] == "metadata.kind"
    assert error["details"]["reason"] == "reserved_kind"
    assert "/v1/sources/working-notes" in error["message"]
    assert outcomes(scope_id, "c1") == [("rejected", "reserved_kind")]


@pytest.mark.parametrize(
    "metadata",
    [{"kind": "Working_Note"}, {"a": {"kind": "working_note"}}, {"kind": "note"}],
)
def test_only_the_exact_reserved_kind_is_refused(
    api: ApiClient, scope_id: str, metadata: dict
) -> None:
    assert capture(api, scope_id, metadata=metadata).status_code == 202


def test_reserved_kind_is_checked_before_the_identity(
    api: ApiClient, scope_id: str
) -> None:
    capture(api, scope_id)

    response = capture(api, scope_id, metadata={"kind": "working_note"})

    assert response.status_code == 422


@pytest.mark.parametrize(
    "fields",
    [
        {"metadata": {"kind": "working_note"}},
        {"content": '{"schema": "powercontext.handoff-receipt.v1"}'},
    ],
)
def test_unknown_scope_is_404_before_domain_rules(api: ApiClient, fields: dict) -> None:
    response = capture(api, "scp_unknown", **fields)

    assert response.status_code == 404
    assert error_of(response)["code"] == "scope_not_found"
    assert not CaptureAttempt.objects.exists()


def test_capture_into_unknown_scope_is_404(api: ApiClient) -> None:
    response = capture(api, "scp_unknown")

    assert response.status_code == 404
    assert error_of(response)["code"] == "scope_not_found"


@pytest.mark.parametrize(
    ("grants", "status"),
    [
        (("{scope}:viewer",), 403),
        (("scp_other:admin",), 403),
        (("{scope}:contributor",), 202),
    ],
)
def test_capture_needs_a_contributor_grant_on_the_scope(
    api: ApiClient,
    client_for: Callable[..., ApiClient],
    scope_id: str,
    grants: tuple[str, ...],
    status: int,
) -> None:
    client = client_for(*(grant.format(scope=scope_id) for grant in grants))

    assert capture(client, scope_id).status_code == status


def test_unknown_scope_without_a_grant_is_403(
    client_for: Callable[..., ApiClient],
) -> None:
    response = capture(client_for("scp_mine:admin"), "scp_not_mine")

    assert response.status_code == 403


@pytest.mark.parametrize(
    ("fields", "loc", "type_"),
    [
        ({"content": ""}, ["body", "content"], "string_too_short"),
        ({"content": "  \n\t"}, ["body", "content"], "string_pattern_mismatch"),
        ({"content": "x" * 200_001}, ["body", "content"], "string_too_long"),
        ({"content": 5}, ["body", "content"], "string_type"),
        ({"content": None}, ["body", "content"], "string_type"),
        ({"source_id": ""}, ["body", "source_id"], "string_too_short"),
        ({"source_id": "   "}, ["body", "source_id"], "string_pattern_mismatch"),
        ({"source_id": " c1"}, ["body", "source_id"], "padded"),
        ({"source_id": "c1\n"}, ["body", "source_id"], "padded"),
        ({"source_id": "x" * 257}, ["body", "source_id"], "string_too_long"),
        ({"source_id": 5}, ["body", "source_id"], "string_type"),
        ({"scope_id": " "}, ["body", "scope_id"], "string_pattern_mismatch"),
        ({"metadata": "m"}, ["body", "metadata"], "dict_type"),
        ({"metadata": []}, ["body", "metadata"], "dict_type"),
        ({"metadata": {"k": "\u0000"}}, ["body", "metadata", "k"], "string_unstorable"),
        ({"metadata": {"n": 2**53}}, ["body", "metadata", "n"], "number_unsupported"),
        (
            {"metadata": {"l": [1, -(2**60)]}},
            ["body", "metadata", "l", 1],
            "number_unsupported",
        ),
        ({"extra": 1}, ["body", "extra"], "extra_forbidden"),
        ({"session_id": "s"}, ["body", "session_id"], "extra_forbidden"),
    ],
)
def test_schema_errors_are_422_before_authorization(
    client_for: Callable[..., ApiClient], fields: dict, loc: list, type_: str
) -> None:
    # A token without any grant on the scope: a schema error still answers 422.
    client = client_for("scp_elsewhere:viewer")
    body = {"scope_id": "scp_any", "source_id": "c1", "content": "hello", **fields}

    response = client.post(CAPTURE, raw=json.dumps(body, allow_nan=True))

    assert response.status_code == 422
    assert {"type": type_, "loc": loc} in [
        {"type": e["type"], "loc": e["loc"]}
        for e in error_of(response)["details"]["errors"]
    ]


@pytest.mark.parametrize(
    "fields",
    [
        {"content": "x" * 200_000},
        {"content": "\U0001f600" * 200_000},
        {"source_id": "x" * 256},
        {"source_id": "\U0001f600" * 256},
        {"source_id": "v 3"},
        {"source_id": "a/b/../c%2F"},
        {"metadata": {"n": 2**53 - 1, "f": 1.5e300, "s": "\u2028", "e": ""}},
        {"metadata": None},
    ],
)
def test_values_at_the_limits_are_accepted(
    api: ApiClient, scope_id: str, fields: dict
) -> None:
    assert capture(api, scope_id, **fields).status_code == 202


def test_capture_and_replay_stay_within_their_statement_budgets(
    api: ApiClient, scope_id: str, assert_max_statements: Callable[[int], Any]
) -> None:
    capture(api, scope_id, source_id="warm-up")  # the token's last-used write

    with assert_max_statements(5):
        first = capture(api, scope_id)
    with assert_max_statements(4):
        replay = capture(api, scope_id)

    assert (first.status_code, replay.status_code) == (202, 202)


def test_a_failing_attempt_log_never_changes_the_answer(
    api: ApiClient, scope_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    capture(api, scope_id)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("attempt table unavailable")

    monkeypatch.setattr(CaptureAttempt.objects, "create", broken)

    replay = capture(api, scope_id)
    conflict = capture(api, scope_id, content="other")

    assert (replay.status_code, conflict.status_code) == (202, 409)
