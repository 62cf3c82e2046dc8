"""Working-note capture through HTTP (api.md 5.2, 5.3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine

from sources.models import CaptureAttempt, ContentSource
from tests.conftest import ApiClient, error_of

pytestmark = pytest.mark.django_db

NOTES = "/v1/sources/working-notes"
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def note(api: ApiClient, scope_id: str, source_id: str = "wn-1", **fields: Any) -> Any:
    body = {
        "scope_id": scope_id,
        "source_id": source_id,
        "content": "inspected the parser",
        "session_id": "sess-1",
        "note_kind": "inspection",
        **fields,
    }
    return api.post(NOTES, body)


@pytest.fixture
def frozen() -> Any:
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


def test_note_is_stored_with_server_owned_columns(
    api: ApiClient, scope_id: str
) -> None:
    response = note(api, scope_id, expires_at="2030-01-01T08:00:00+08:00")

    assert response.status_code == 202
    assert response.json() == {
        "status": "accepted",
        "source": {"name": "content", "source_id": "wn-1"},
        "position": 1,
    }
    row = ContentSource.objects.get(source_id="wn-1")
    assert (row.is_working_note, row.session_id, row.note_kind) == (
        True,
        "sess-1",
        "inspection",
    )
    assert row.expires_at == datetime(2030, 1, 1, tzinfo=UTC)
    assert row.metadata == {
        "kind": "working_note",
        "session_id": "sess-1",
        "note_kind": "inspection",
        "expires_at": "2030-01-01T00:00:00Z",
    }


@pytest.mark.parametrize(
    "kind",
    ["inspection", "abandoned_approach", "validation", "unresolved", "host_context"],
)
def test_every_note_kind_is_accepted(api: ApiClient, scope_id: str, kind: str) -> None:
    assert note(api, scope_id, note_kind=kind).status_code == 202


@pytest.mark.parametrize(
    ("fields", "loc", "type_"),
    [
        ({"note_kind": "Inspection"}, ["body", "note_kind"], "enum"),
        ({"note_kind": 1}, ["body", "note_kind"], "string_type"),
        ({"metadata": {}}, ["body", "metadata"], "extra_forbidden"),
        ({"session_id": " "}, ["body", "session_id"], "string_pattern_mismatch"),
        ({"session_id": "s" * 257}, ["body", "session_id"], "string_too_long"),
        ({"content": " "}, ["body", "content"], "string_pattern_mismatch"),
        ({"source_id": "wn-1 "}, ["body", "source_id"], "padded"),
        (
            {"expires_at": "2030-01-01T00:00:00"},
            ["body", "expires_at"],
            "timezone_aware",
        ),
        (
            {"expires_at": "2020-01-01T00:00:00"},
            ["body", "expires_at"],
            "timezone_aware",
        ),
        ({"expires_at": "2030-01-01"}, ["body", "expires_at"], "timezone_aware"),
        (
            {"expires_at": "2030-01-01T00:00:00.1234567Z"},
            ["body", "expires_at"],
            "datetime_format",
        ),
        (
            {"expires_at": "tomorrow"},
            ["body", "expires_at"],
            "datetime_from_date_parsing",
        ),
        (
            {"expires_at": "2030-02-30T00:00:00Z"},
            ["body", "expires_at"],
            "datetime_from_date_parsing",
        ),
        ({"expires_at": 1893456000}, ["body", "expires_at"], "datetime_type"),
        ({"expires_at": True}, ["body", "expires_at"], "datetime_type"),
    ],
)
def test_note_schema_errors(
    api: ApiClient, scope_id: str, fields: dict, loc: list, type_: str
) -> None:
    response = note(api, scope_id, **fields)

    assert response.status_code == 422
    assert {"type": type_, "loc": loc} in [
        {"type": e["type"], "loc": e["loc"]}
        for e in error_of(response)["details"]["errors"]
    ]


@pytest.mark.parametrize(
    "expires_at",
    [
        pytest.param("2255-06-05T23:47:34.740992Z", id="after-2^53-microseconds"),
        pytest.param("9999-12-31T23:59:59Z", id="year-9999"),
        pytest.param("1684-07-28T00:12:25.259008Z", id="before-minus-2^53"),
        pytest.param("0001-01-01T00:00:00Z", id="year-1"),
        pytest.param("0001-01-01T00:00:00+01:00", id="before-year-1-in-utc"),
        pytest.param("9999-12-31T23:59:59-01:00", id="after-year-9999-in-utc"),
    ],
)
def test_expiry_the_value_digest_cannot_hold_is_422_not_500(
    api: ApiClient, scope_id: str, expires_at: str
) -> None:
    """``expires_at`` enters the value digest as integer microseconds, which RFC 8785
    allows only within +-(2^53-1): about 1684-07-28 to 2255-06-05 (found by fuzzing:
    these were 500s)."""
    response = note(api, scope_id, expires_at=expires_at)

    assert response.status_code == 422
    assert error_of(response)["details"]["errors"] == [
        {
            "type": "datetime_range",
            "loc": ["body", "expires_at"],
            "msg": (
                "Input should be a date-time between 1684-07-28T00:12:25.259009Z "
                "and 2255-06-05T23:47:34.740991Z."
            ),
        }
    ]
    assert not CaptureAttempt.objects.exists()


@pytest.mark.parametrize(
    "expires_at", ["2255-06-05T23:47:34.740991Z", "2255-06-06T00:47:34.740991+01:00"]
)
def test_the_latest_representable_expiry_is_accepted_and_replays(
    api: ApiClient, scope_id: str, expires_at: str
) -> None:
    first = note(api, scope_id, expires_at="2255-06-05T23:47:34.740991Z")
    replay = note(api, scope_id, expires_at=expires_at)

    assert (first.status_code, replay.status_code) == (202, 202)
    assert replay.json() == first.json()


def test_an_expiry_on_an_existing_identity_far_in_the_past_is_422(
    api: ApiClient, scope_id: str
) -> None:
    assert note(api, scope_id).status_code == 202

    response = note(api, scope_id, expires_at="1000-01-01T00:00:00Z")

    assert response.status_code == 422
    assert error_of(response)["details"]["errors"][0]["type"] == "datetime_range"


@pytest.mark.parametrize(
    "missing", ["scope_id", "source_id", "content", "session_id", "note_kind"]
)
def test_required_note_fields(api: ApiClient, scope_id: str, missing: str) -> None:
    body = {
        "scope_id": scope_id,
        "source_id": "wn",
        "content": "c",
        "session_id": "s",
        "note_kind": "inspection",
    }
    del body[missing]

    response = api.post(NOTES, body)

    assert error_of(response)["details"]["errors"] == [
        {"type": "missing", "loc": ["body", missing], "msg": "Field required"}
    ]


def test_past_expiry_on_a_new_identity_is_not_in_future(
    api: ApiClient, scope_id: str, frozen: Any
) -> None:
    response = note(api, scope_id, expires_at="2026-06-01T12:00:00Z")  # == now

    assert response.status_code == 422
    assert error_of(response)["details"] == {
        "field": "expires_at",
        "reason": "not_in_future",
    }
    assert not ContentSource.objects.exists()
    assert list(CaptureAttempt.objects.values_list("outcome", "reason")) == [
        ("rejected", "not_in_future")
    ]


def test_a_microsecond_in_the_future_is_accepted(
    api: ApiClient, scope_id: str, frozen: Any
) -> None:
    assert (
        note(api, scope_id, expires_at="2026-06-01T12:00:00.000001Z").status_code == 202
    )


def test_exact_replay_after_expiry_returns_the_original_receipt(
    api: ApiClient, scope_id: str, frozen: Any
) -> None:
    expiry = "2026-06-01T13:00:00Z"
    first = note(api, scope_id, expires_at=expiry)
    frozen.move_to(NOW + timedelta(days=1))

    replay = note(api, scope_id, expires_at=expiry)

    assert replay.status_code == 202
    assert replay.json() == first.json()
    assert replay["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize(
    "change",
    [
        {"content": "something else"},
        {"expires_at": "2026-06-01T13:00:00.000001Z"},
        {"expires_at": "2026-06-01T11:00:00Z"},
        {"expires_at": None},
        {"session_id": "sess-2"},
        {"note_kind": "validation"},
    ],
)
def test_different_value_after_expiry_is_a_conflict(
    api: ApiClient, scope_id: str, frozen: Any, change: dict
) -> None:
    note(api, scope_id, expires_at="2026-06-01T13:00:00Z")
    frozen.move_to(NOW + timedelta(days=1))

    response = note(api, scope_id, **{"expires_at": "2026-06-01T13:00:00Z", **change})

    assert response.status_code == 409
    assert error_of(response)["code"] == "source_conflict"


@pytest.mark.parametrize(
    "same_instant",
    [
        "2030-01-01T08:00:00+08:00",
        "2029-12-31T19:00:00-05:00",
        "2030-01-01T00:00:00.000000Z",
        "2030-01-01t00:00:00z",
        "2030-01-01 00:00:00+00:00",
    ],
)
def test_the_same_instant_in_any_offset_replays(
    api: ApiClient, scope_id: str, same_instant: str
) -> None:
    note(api, scope_id, expires_at="2030-01-01T00:00:00Z")

    response = note(api, scope_id, expires_at=same_instant)

    assert response.status_code == 202
    assert response["Idempotent-Replayed"] == "true"


def test_null_expiry_replays_an_omitted_one(api: ApiClient, scope_id: str) -> None:
    note(api, scope_id)

    assert note(api, scope_id, expires_at=None)["Idempotent-Replayed"] == "true"


def test_note_onto_a_plain_source_identity_is_a_conflict(
    api: ApiClient, scope_id: str
) -> None:
    api.post(
        "/v1/sources/content",
        {"scope_id": scope_id, "source_id": "x1", "content": "inspected the parser"},
    )

    assert note(api, scope_id, source_id="x1").status_code == 409


def test_plain_capture_onto_a_note_identity_is_a_conflict(
    api: ApiClient, scope_id: str
) -> None:
    note(api, scope_id)
    mimic = {"session_id": "sess-1", "note_kind": "inspection"}

    response = api.post(
        "/v1/sources/content",
        {
            "scope_id": scope_id,
            "source_id": "wn-1",
            "content": "inspected the parser",
            "metadata": mimic,
        },
    )

    assert response.status_code == 409


def test_generic_capture_cannot_set_the_working_note_flag(
    api: ApiClient, scope_id: str
) -> None:
    api.post(
        "/v1/sources/content",
        {
            "scope_id": scope_id,
            "source_id": "fake",
            "content": "c",
            "metadata": {
                "working_note": True,
                "is_working_note": True,
                "note_kind": "x",
            },
        },
    )

    assert ContentSource.objects.get(source_id="fake").is_working_note is False


def test_unknown_scope_is_404_even_with_a_past_expiry(api: ApiClient) -> None:
    response = note(api, "scp_unknown", expires_at="2000-01-01T00:00:00Z")

    assert response.status_code == 404
    assert error_of(response)["code"] == "scope_not_found"


def test_notes_and_plain_sources_share_positions(api: ApiClient, scope_id: str) -> None:
    api.post(
        "/v1/sources/content", {"scope_id": scope_id, "source_id": "p", "content": "c"}
    )

    assert note(api, scope_id).json()["position"] == 2
