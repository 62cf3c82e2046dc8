"""The envelope through HTTP: GET/PUT/PATCH, ownership, ETags, versions, clock."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from sessions_app.models import EnvelopeRevision, SessionEnvelope
from tests.conftest import ApiClient, create_scope, error_of
from tests.sessions_app.conftest import (
    SESSION,
    envelope_row,
    revision_versions,
    session_path,
)

pytestmark = pytest.mark.django_db

REQUEST_ID = re.compile(r"^[0-9a-f]{16}$")
# A write of each kind that changes an envelope holding only worker keys.
CHANGING_WRITE = {"PUT": {"personaId": "p"}, "PATCH": {"cwd": "/changed"}}


def test_get_of_a_missing_envelope_is_404_session_not_found(
    api: ApiClient, scope_id: str
) -> None:
    response = api.get(session_path(scope_id))

    assert response.status_code == 404
    assert error_of(response)["code"] == "session_not_found"


def test_put_creates_the_envelope_with_201_and_get_returns_it(
    api: ApiClient, scope_id: str
) -> None:
    moment = datetime(2026, 11, 30, 12, 0, 0, 123000, tzinfo=UTC)
    with time_machine.travel(moment, tick=False):
        created = api.put(
            session_path(scope_id), {"meta": {"selectedModel": "m-large"}}
        )
    fetched = api.get(session_path(scope_id))

    assert created.status_code == 201
    assert created.json() == {
        "scope_id": scope_id,
        "session_id": SESSION,
        "meta": {"selectedModel": "m-large"},
        "version": 1,
        "clock": 1796040000123,
        "created_at": "2026-11-30T12:00:00.123000Z",
        "updated_at": "2026-11-30T12:00:00.123000Z",
    }
    assert created["ETag"] == '"1"'
    assert (fetched.status_code, fetched.json()) == (200, created.json())
    assert fetched["ETag"] == '"1"'
    row = envelope_row(scope_id)
    assert (row.meta, row.version, row.clock) == (
        {"selectedModel": "m-large"},
        1,
        1796040000123,
    )


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_a_write_with_empty_meta_still_creates_the_envelope(
    api: ApiClient, scope_id: str, method: str
) -> None:
    response = api.request(method, session_path(scope_id), {"meta": {}})

    assert response.status_code == 201
    assert response.json()["meta"] == {}
    assert envelope_row(scope_id).version == 1
    assert revision_versions(scope_id) == [1]


def test_a_second_write_answers_200_with_the_next_version(
    api: ApiClient, scope_id: str
) -> None:
    api.put(session_path(scope_id), {"meta": {"personaId": "p1"}})

    response = api.put(session_path(scope_id), {"meta": {"personaId": "p2"}})

    assert response.status_code == 200
    assert response.json()["version"] == 2
    assert response["ETag"] == '"2"'
    assert revision_versions(scope_id) == [1, 2]


def test_put_replaces_host_keys_and_carries_worker_keys_forward(
    api: ApiClient, scope_id: str
) -> None:
    api.put(
        session_path(scope_id),
        {"meta": {"personaId": "p1", "selectedModel": "m1", "x-theme": "dark"}},
    )
    api.patch(session_path(scope_id), {"meta": {"cwd": "/work", "turnCursor": 3}})

    response = api.put(session_path(scope_id), {"meta": {"selectedModel": "m2"}})

    expected = {"selectedModel": "m2", "cwd": "/work", "turnCursor": 3}
    assert response.json()["meta"] == expected
    assert envelope_row(scope_id).meta == expected


def test_patch_sets_named_worker_keys_and_keeps_every_other_key(
    api: ApiClient, scope_id: str
) -> None:
    api.put(session_path(scope_id), {"meta": {"personaId": "p1", "x-a": 1}})
    api.patch(session_path(scope_id), {"meta": {"cwd": "/a", "statusSlot": "busy"}})

    response = api.patch(session_path(scope_id), {"meta": {"cwd": "/b"}})

    expected = {"personaId": "p1", "x-a": 1, "cwd": "/b", "statusSlot": "busy"}
    assert response.json()["meta"] == expected
    assert envelope_row(scope_id).meta == expected


@pytest.mark.parametrize("clearing", [None, ""])
def test_patch_with_null_or_empty_string_clears_a_key(
    api: ApiClient, scope_id: str, clearing: str | None
) -> None:
    api.patch(session_path(scope_id), {"meta": {"cwd": "/a", "turnRunId": "r1"}})

    response = api.patch(session_path(scope_id), {"meta": {"cwd": clearing}})

    assert response.json()["meta"] == {"turnRunId": "r1"}
    assert envelope_row(scope_id).meta == {"turnRunId": "r1"}


@pytest.mark.parametrize("clearing", [None, ""])
def test_put_with_null_or_empty_string_leaves_a_host_key_unset(
    api: ApiClient, scope_id: str, clearing: str | None
) -> None:
    response = api.put(
        session_path(scope_id), {"meta": {"personaId": clearing, "x-a": clearing}}
    )

    assert response.json()["meta"] == {}


@pytest.mark.parametrize(
    ("method", "first", "again"),
    [
        ("PUT", {"personaId": "p", "x-n": 1}, {"x-n": 1, "personaId": "p"}),
        ("PATCH", {"cwd": "/a"}, {"cwd": "/a"}),
        ("PATCH", {"cwd": "/a"}, {"turnRunId": None}),
    ],
)
def test_a_write_that_changes_nothing_creates_no_version(
    api: ApiClient, scope_id: str, method: str, first: dict, again: dict
) -> None:
    api.request(method, session_path(scope_id), {"meta": first})

    response = api.request(method, session_path(scope_id), {"meta": again})

    assert response.status_code == 200
    assert response.json()["version"] == 1
    assert response["ETag"] == '"1"'
    assert revision_versions(scope_id) == [1]


@pytest.mark.parametrize(
    ("stored", "sent"),
    [(1, True), (1, 1.5), ("1", 1)],
)
def test_json_types_are_kept_apart_when_comparing(
    api: ApiClient, scope_id: str, stored: object, sent: object
) -> None:
    api.put(session_path(scope_id), {"meta": {"x-v": stored}})

    response = api.put(session_path(scope_id), {"meta": {"x-v": sent}})

    assert response.json()["version"] == 2
    assert envelope_row(scope_id).meta == {"x-v": sent}


# --- Ownership -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "sent",
    [
        pytest.param({"cwd": "/other"}, id="different-value"),
        pytest.param({"turnCursor": "3"}, id="different-type"),
        pytest.param({"cwd": "/work", "turnRunId": "r"}, id="unset-key"),
        pytest.param({"cwd": "/work", "turnRunId": None}, id="null-for-unset-key"),
        pytest.param({"cwd": None}, id="null-for-set-key"),
    ],
)
def test_put_may_not_change_a_worker_key(
    api: ApiClient, scope_id: str, sent: dict
) -> None:
    api.patch(session_path(scope_id), {"meta": {"cwd": "/work", "turnCursor": 3}})

    response = api.put(session_path(scope_id), {"meta": {"personaId": "p", **sent}})

    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "not_host_key"
    assert error["details"]["field"].startswith("meta.")
    row = envelope_row(scope_id)
    assert (row.version, row.meta) == (1, {"cwd": "/work", "turnCursor": 3})


def test_put_may_repeat_worker_keys_with_exactly_their_current_values(
    api: ApiClient, scope_id: str
) -> None:
    api.patch(
        session_path(scope_id),
        {"meta": {"cwd": "/work", "turnCursor": 3, "workingNotes": "n"}},
    )

    response = api.put(
        session_path(scope_id),
        {
            "meta": {
                "cwd": "/work",
                "turnCursor": 3,
                "workingNotes": "n",
                "personaId": "p",
            }
        },
    )

    assert response.status_code == 200
    assert response.json()["meta"] == {
        "cwd": "/work",
        "turnCursor": 3,
        "workingNotes": "n",
        "personaId": "p",
    }


def test_a_stale_host_copy_of_the_notes_never_reverts_them(
    api: ApiClient, scope_id: str
) -> None:
    api.patch(session_path(scope_id), {"meta": {"workingNotes": "old"}})
    api.patch(session_path(scope_id), {"meta": {"workingNotes": "new"}})

    response = api.put(session_path(scope_id), {"meta": {"workingNotes": "old"}})

    assert error_of(response)["code"] == "not_host_key"
    assert envelope_row(scope_id).meta == {"workingNotes": "new"}


@pytest.mark.parametrize("key", ["personaId", "selectedModel", "x-theme"])
def test_patch_may_not_name_a_host_key(api: ApiClient, scope_id: str, key: str) -> None:
    response = api.patch(session_path(scope_id), {"meta": {"cwd": "/a", key: "v"}})

    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "not_worker_key"
    assert error["details"]["field"] == f"meta.{key}"
    assert not SessionEnvelope.objects.exists()


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
@pytest.mark.parametrize("key", ["unknown", "X-upper", "", "x", "workingnotes"])
def test_unknown_keys_are_422_unknown_meta_key(
    api: ApiClient, scope_id: str, method: str, key: str
) -> None:
    response = api.request(method, session_path(scope_id), {"meta": {key: "v"}})

    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "unknown_meta_key"
    assert error["details"]["field"] == f"meta.{key}"
    assert not SessionEnvelope.objects.exists()


# --- Preconditions ---------------------------------------------------------------------


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
@pytest.mark.parametrize("if_match", ['"2"', '"1", "2"', '"9", "2"', "*", ' "2" '])
def test_if_match_that_names_the_current_version_writes(
    api: ApiClient, scope_id: str, method: str, if_match: str
) -> None:
    api.patch(session_path(scope_id), {"meta": {"cwd": "/a"}})
    api.patch(session_path(scope_id), {"meta": {"cwd": "/b"}})

    response = api.request(
        method,
        session_path(scope_id),
        {"meta": CHANGING_WRITE[method]},
        headers={"If-Match": if_match},
    )

    assert response.status_code == 200
    assert response.json()["version"] == 3


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
@pytest.mark.parametrize(
    "if_match",
    [
        '"1"',
        'W/"2"',
        "2",
        '"02"',
        '"2" "3"',
        "",
        '"2",,',
        "**",
        # Only ASCII digits are digits, only space and tab are HTTP whitespace.
        '"\u0662"',  # Arabic-Indic two
        '"\uff12"',  # fullwidth two
        '\xa0"2"',  # NBSP (byte 0xA0 in a latin-1 header)
        '"2"\x85',  # NEL
        "\xa0*",
        "*\x85",
    ],
)
def test_if_match_that_does_not_match_is_412_and_writes_nothing(
    api: ApiClient, scope_id: str, method: str, if_match: str
) -> None:
    api.patch(session_path(scope_id), {"meta": {"cwd": "/a"}})
    api.patch(session_path(scope_id), {"meta": {"cwd": "/b"}})

    response = api.request(
        method,
        session_path(scope_id),
        {"meta": {"cwd": None}},
        headers={"If-Match": if_match},
    )

    assert response.status_code == 412
    assert error_of(response)["code"] == "precondition_failed"
    assert envelope_row(scope_id).meta == {"cwd": "/b"}
    assert revision_versions(scope_id) == [1, 2]


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
@pytest.mark.parametrize("if_match", ["*", '"1"'])
def test_any_if_match_on_a_missing_envelope_is_412(
    api: ApiClient, scope_id: str, method: str, if_match: str
) -> None:
    response = api.request(
        method, session_path(scope_id), {"meta": {}}, headers={"If-Match": if_match}
    )

    assert response.status_code == 412
    assert error_of(response)["code"] == "precondition_failed"
    assert not SessionEnvelope.objects.exists()


def test_precondition_is_checked_before_the_meta_rules(
    api: ApiClient, scope_id: str
) -> None:
    api.patch(session_path(scope_id), {"meta": {"cwd": "/a"}})

    response = api.put(
        session_path(scope_id), {"meta": {"nope": 1}}, headers={"If-Match": '"7"'}
    )

    assert response.status_code == 412


@pytest.mark.parametrize("if_none_match", ['"1"', 'W/"1"', "*", '"5", "1"'])
def test_if_none_match_with_the_current_etag_is_304_without_body(
    api: ApiClient, scope_id: str, if_none_match: str
) -> None:
    api.put(session_path(scope_id), {"meta": {"personaId": "p"}})

    response = api.get(session_path(scope_id), headers={"If-None-Match": if_none_match})

    assert response.status_code == 304
    assert response.content == b""
    assert response["ETag"] == '"1"'
    assert REQUEST_ID.match(response["X-PowerContext-Request-ID"])


@pytest.mark.parametrize(
    "if_none_match", ['"2"', '"01"', "garbage", "", '"\u0661"', "\xa0*", '\xa0"1"']
)
def test_if_none_match_with_another_etag_returns_the_envelope(
    api: ApiClient, scope_id: str, if_none_match: str
) -> None:
    api.put(session_path(scope_id), {"meta": {"personaId": "p"}})

    response = api.get(session_path(scope_id), headers={"If-None-Match": if_none_match})

    assert response.status_code == 200
    assert response.json()["meta"] == {"personaId": "p"}


def test_if_none_match_on_a_missing_envelope_is_still_404(
    api: ApiClient, scope_id: str
) -> None:
    response = api.get(session_path(scope_id), headers={"If-None-Match": "*"})

    assert response.status_code == 404


# --- Versions, clock, revisions ----------------------------------------------------------


def test_each_write_appends_one_revision_with_its_writer(
    client_for: Callable[..., ApiClient], scope_id: str
) -> None:
    host = client_for(f"{scope_id}:contributor", name="host-ui")
    worker = client_for(f"{scope_id}:contributor", name="turn-worker")

    first = host.put(session_path(scope_id), {"meta": {"personaId": "p"}})
    second = worker.patch(session_path(scope_id), {"meta": {"cwd": "/a"}})
    third = worker.put(session_path(scope_id, suffix="working-notes"), {"notes": "n"})
    fourth = worker.delete(session_path(scope_id, suffix="working-notes"))

    revisions = list(
        EnvelopeRevision.objects.order_by("version").values_list(
            "version", "writer", "operation", "principal", "request_id"
        )
    )
    assert revisions == [
        (1, "host", "replace", "host-ui", first["X-PowerContext-Request-ID"]),
        (2, "worker", "overlay", "turn-worker", second["X-PowerContext-Request-ID"]),
        (3, "worker", "notes_put", "turn-worker", third["X-PowerContext-Request-ID"]),
        (
            4,
            "worker",
            "notes_clear",
            "turn-worker",
            fourth["X-PowerContext-Request-ID"],
        ),
    ]


def test_clock_is_wall_time_in_ms_and_never_goes_back(
    api: ApiClient, scope_id: str
) -> None:
    start = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    start_ms = int(start.timestamp() * 1000)
    clocks = []
    for moment in (
        start,
        start - timedelta(hours=1),
        start,
        start + timedelta(seconds=5),
    ):
        with time_machine.travel(moment, tick=False):
            response = api.patch(
                session_path(scope_id), {"meta": {"turnCursor": len(clocks)}}
            )
        clocks.append(response.json()["clock"])

    assert clocks == [start_ms, start_ms + 1, start_ms + 2, start_ms + 5000]
    assert (
        list(
            EnvelopeRevision.objects.order_by("version").values_list("clock", flat=True)
        )
        == clocks
    )


def test_updated_at_moves_and_created_at_stays(api: ApiClient, scope_id: str) -> None:
    with time_machine.travel(datetime(2026, 1, 1, tzinfo=UTC), tick=False):
        api.put(session_path(scope_id), {"meta": {}})
    with time_machine.travel(datetime(2026, 1, 2, tzinfo=UTC), tick=False):
        response = api.patch(session_path(scope_id), {"meta": {"cwd": "/a"}})

    body = response.json()
    assert (body["created_at"], body["updated_at"]) == (
        "2026-01-01T00:00:00Z",
        "2026-01-02T00:00:00Z",
    )


# --- Identity and authorization ---------------------------------------------------------


def test_the_same_session_id_in_two_scopes_names_two_envelopes(
    api: ApiClient,
) -> None:
    first = create_scope(api, key="first")
    second = create_scope(api, key="second")

    api.put(session_path(first), {"meta": {"personaId": "one"}})
    api.put(session_path(second), {"meta": {"personaId": "two"}})
    api.patch(session_path(second), {"meta": {"cwd": "/two"}})

    assert api.get(session_path(first)).json()["meta"] == {"personaId": "one"}
    assert api.get(session_path(second)).json()["meta"] == {
        "personaId": "two",
        "cwd": "/two",
    }
    assert (envelope_row(first).version, envelope_row(second).version) == (1, 2)


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("GET", "envelope", None),
        ("PUT", "envelope", {"meta": {}}),
        ("PATCH", "envelope", {"meta": {}}),
        ("GET", "working-notes", None),
        ("PUT", "working-notes", {"notes": "n"}),
        ("DELETE", "working-notes", None),
        ("GET", "working-notes/fold", None),
    ],
)
@pytest.mark.parametrize("session_id", [SESSION, "other", "a/b"])
def test_no_grant_on_the_scope_is_403_for_every_operation(
    api: ApiClient,
    client_for: Callable[..., ApiClient],
    method: str,
    suffix: str,
    body: dict | None,
    session_id: str,
) -> None:
    scope_id = create_scope(api, key="mine")
    other = create_scope(api, key="other")
    api.put(session_path(scope_id, session_id), {"meta": {"personaId": "p"}})
    api.put(session_path(scope_id, session_id, "working-notes"), {"notes": "n"})
    stranger = client_for(f"{other}:admin", name="stranger")

    response = stranger.request(
        method, session_path(scope_id, session_id, suffix), body
    )

    assert response.status_code == 403
    assert error_of(response)["code"] == "forbidden"
    assert envelope_row(scope_id, session_id).version == 2


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("PUT", "envelope", {"meta": {}}),
        ("PATCH", "envelope", {"meta": {}}),
        ("PUT", "working-notes", {"notes": "n"}),
        ("DELETE", "working-notes", None),
    ],
)
def test_a_viewer_may_read_but_not_write(
    client_for: Callable[..., ApiClient],
    scope_id: str,
    method: str,
    suffix: str,
    body: dict | None,
) -> None:
    viewer = client_for(f"{scope_id}:viewer")

    write = viewer.request(method, session_path(scope_id, suffix=suffix), body)
    read = viewer.get(session_path(scope_id, suffix="working-notes"))

    assert write.status_code == 403
    assert read.status_code == 200
    assert not SessionEnvelope.objects.exists()


def test_a_stranger_cannot_probe_for_a_missing_scope(
    client_for: Callable[..., ApiClient],
) -> None:
    stranger = client_for("scp_other:admin")

    response = stranger.get(session_path("scp_missing"))

    assert response.status_code == 403


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("GET", "envelope", None),
        ("PUT", "envelope", {"meta": {}}),
        ("PATCH", "envelope", {"meta": {}}),
        ("GET", "working-notes", None),
        ("PUT", "working-notes", {"notes": "n"}),
        ("DELETE", "working-notes", None),
        ("GET", "working-notes/fold", None),
    ],
)
def test_a_missing_scope_is_404_scope_not_found(
    api: ApiClient, method: str, suffix: str, body: dict | None
) -> None:
    response = api.request(method, session_path("scp_missing", suffix=suffix), body)

    assert response.status_code == 404
    assert error_of(response)["code"] == "scope_not_found"
    assert not SessionEnvelope.objects.exists()


def test_new_session_id_starts_empty_and_the_old_envelope_stays(
    api: ApiClient, scope_id: str
) -> None:
    api.put(session_path(scope_id, "old"), {"meta": {"personaId": "p"}})

    new = api.patch(session_path(scope_id, "new"), {"meta": {"cwd": "/"}})

    assert new.json()["meta"] == {"cwd": "/"}
    assert api.get(session_path(scope_id, "old")).json()["meta"] == {"personaId": "p"}
