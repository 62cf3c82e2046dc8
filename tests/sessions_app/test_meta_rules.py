"""The meta rules through HTTP: every reserved key (right type, wrong type, at cap,
over cap), the ``x-`` rule, the 1 MiB whole-meta cap, and stored poison."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from sessions_app.meta_keys import RESERVED_KEYS, Owner
from sessions_app.models import SessionEnvelope
from tests.conftest import ApiClient, error_of
from tests.sessions_app.conftest import envelope_row, session_path, write_key

pytestmark = pytest.mark.django_db

KIB = 1024
MIB = 1024 * KIB


def text_of(size: int) -> str:
    """``size`` UTF-8 bytes of text made of 2-byte characters (plus one ASCII char
    when ``size`` is odd), so a cap counted in characters would let it through."""
    return "é" * (size // 2) + "a" * (size % 2)


def json_array_of(size: int) -> str:
    """A JSON array of one string, ``size`` bytes long."""
    return '["' + "s" * (size - 4) + '"]'


def json_object_of(size: int) -> str:
    """A JSON object of one string member, ``size`` bytes long."""
    return '{"k":"' + "v" * (size - 8) + '"}'


# (key, value) pairs that are stored exactly as sent.
ACCEPTED = [
    ("personaId", "persona-1"),
    ("personaId", text_of(256)),
    ("personaSnapshot", "You are terse."),
    ("personaSnapshot", text_of(512 * KIB)),
    ("selectedModel", "m-large"),
    ("selectedModel", text_of(256)),
    ("reasoningEffort", "low"),
    ("reasoningEffort", "medium"),
    ("reasoningEffort", "high"),
    ("attachedSkills", "[]"),
    ("attachedSkills", '["lint", "deploy"]'),
    ("attachedSkills", json_array_of(64 * KIB)),
    ("cwd", "/work/repo"),
    ("cwd", text_of(4096)),
    ("activeSandboxId", "sbx-1"),
    ("activeSandboxId", text_of(256)),
    ("turnRunId", "run-1"),
    ("turnRunId", text_of(256)),
    ("turnStatus", "idle"),
    ("turnStatus", "running"),
    ("turnStatus", "completed"),
    ("turnStatus", "cancelled"),
    ("turnStatus", "failed"),
    ("turnCursor", 0),
    ("turnCursor", 42),
    ("turnCursor", 2**53 - 1),
    ("usage", '{"input_tokens": 10, "output_tokens": 3}'),
    ("usage", json_object_of(8 * KIB)),
    ("statusSlot", "thinking"),
    ("statusSlot", text_of(96)),
    ("modelMessagesPointer", "blob://turns/1"),
    ("modelMessagesPointer", text_of(2048)),
    ("workingNotes", "Checked the lockfile; pinned versions."),
    ("workingNotes", text_of(32 * KIB)),
    ("x-theme", "dark"),
    ("x-count", 3),
    ("x-ratio", 0.5),
    ("x-negative", -7),
    ("x-flag", True),
    ("x-flag", False),
    ("x-", "an empty suffix still starts with x-"),
    ("x-big", "v" * 100 * KIB),
]

# (key, value, reason) for values the key's rule rejects with ``invalid_request``.
REJECTED = [
    ("personaId", 5, "wrong_type"),
    ("personaId", text_of(257), "too_large"),
    ("personaSnapshot", ["a"], "wrong_type"),
    ("personaSnapshot", text_of(512 * KIB + 1), "too_large"),
    ("selectedModel", True, "wrong_type"),
    ("selectedModel", text_of(257), "too_large"),
    ("reasoningEffort", 1, "wrong_type"),
    ("reasoningEffort", "extreme", "not_allowed"),
    ("reasoningEffort", "HIGH", "not_allowed"),
    ("attachedSkills", ["lint"], "wrong_type"),
    ("attachedSkills", "lint", "invalid_json_text"),
    ("attachedSkills", "[1, 2]", "invalid_json_text"),
    ("attachedSkills", '{"a": "b"}', "invalid_json_text"),
    ("attachedSkills", "[NaN]", "invalid_json_text"),
    ("attachedSkills", json_array_of(64 * KIB + 1), "too_large"),
    ("cwd", 7, "wrong_type"),
    ("cwd", text_of(4097), "too_large"),
    ("activeSandboxId", {"id": 1}, "wrong_type"),
    ("activeSandboxId", text_of(257), "too_large"),
    ("turnRunId", 1.5, "wrong_type"),
    ("turnRunId", text_of(257), "too_large"),
    ("turnStatus", 0, "wrong_type"),
    ("turnStatus", "done", "not_allowed"),
    ("turnCursor", "3", "wrong_type"),
    ("turnCursor", True, "wrong_type"),
    ("turnCursor", 1.0, "wrong_type"),
    ("turnCursor", -1, "out_of_range"),
    ("usage", {"input_tokens": 1}, "wrong_type"),
    ("usage", "[1]", "invalid_json_text"),
    ("usage", "{bad", "invalid_json_text"),
    ("usage", json_object_of(8 * KIB + 1), "too_large"),
    ("statusSlot", False, "wrong_type"),
    ("statusSlot", text_of(97), "too_large"),
    ("modelMessagesPointer", 1, "wrong_type"),
    ("modelMessagesPointer", text_of(2049), "too_large"),
    ("workingNotes", 1, "wrong_type"),
    ("x-object", {"a": 1}, "not_scalar"),
    ("x-list", [1], "not_scalar"),
]


def test_the_tables_cover_every_reserved_key() -> None:
    assert {key for key, _ in ACCEPTED} >= set(RESERVED_KEYS)
    assert {key for key, _, _ in REJECTED} >= set(RESERVED_KEYS)


@pytest.mark.parametrize(
    ("key", "value"), ACCEPTED, ids=[f"{k}-{i}" for i, (k, _) in enumerate(ACCEPTED)]
)
def test_a_value_that_keeps_its_rule_is_stored_and_read_back(
    api: ApiClient, scope_id: str, key: str, value: Any
) -> None:
    written = write_key(api, scope_id, key, value)
    read = api.get(session_path(scope_id))

    assert written.status_code == 201, written.content[:500]
    assert written.json()["meta"] == {key: value}
    assert read.json()["meta"] == {key: value}
    assert envelope_row(scope_id).meta == {key: value}


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    REJECTED,
    ids=[f"{k}-{r}-{i}" for i, (k, _, r) in enumerate(REJECTED)],
)
def test_a_value_that_breaks_its_rule_is_422_naming_the_field(
    api: ApiClient, scope_id: str, key: str, value: Any, reason: str
) -> None:
    response = write_key(api, scope_id, key, value)

    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert (error["details"]["field"], error["details"]["reason"]) == (
        f"meta.{key}",
        reason,
    )
    assert not SessionEnvelope.objects.exists()


def test_an_over_cap_value_reports_its_size_and_the_cap(
    api: ApiClient, scope_id: str
) -> None:
    response = write_key(api, scope_id, "statusSlot", text_of(97))

    assert error_of(response)["details"] == {
        "field": "meta.statusSlot",
        "reason": "too_large",
        "bytes": 97,
        "max_bytes": 96,
    }


def test_notes_over_the_cap_in_a_patch_are_working_notes_too_large(
    api: ApiClient, scope_id: str
) -> None:
    response = write_key(api, scope_id, "workingNotes", text_of(32 * KIB + 1))

    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "working_notes_too_large"
    assert error["details"] == {
        "field": "meta.workingNotes",
        "reason": "too_large",
        "bytes": 32 * KIB + 1,
        "max_bytes": 32 * KIB,
    }


def test_notes_are_trimmed_in_a_patch_too(api: ApiClient, scope_id: str) -> None:
    response = write_key(
        api, scope_id, "workingNotes", "\n  " + text_of(32 * KIB) + " \t"
    )

    assert response.status_code == 201
    assert envelope_row(scope_id).meta == {"workingNotes": text_of(32 * KIB)}


@pytest.mark.parametrize(
    ("setting", "key", "limit", "value_of"),
    [
        ("STATUS_SLOT_MAX_BYTES", "statusSlot", 10, text_of),
        ("PERSONA_SNAPSHOT_MAX_BYTES", "personaSnapshot", 100, text_of),
        ("PERSONA_ID_MAX_BYTES", "personaId", 8, text_of),
        ("CWD_MAX_BYTES", "cwd", 3, text_of),
        ("USAGE_MAX_BYTES", "usage", 20, json_object_of),
        ("ATTACHED_SKILLS_MAX_BYTES", "attachedSkills", 20, json_array_of),
    ],
)
def test_caps_are_settings_read_at_call_time(
    api: ApiClient,
    scope_id: str,
    settings: Any,
    setting: str,
    key: str,
    limit: int,
    value_of: Any,
) -> None:
    setattr(settings, setting, limit)

    at_cap = write_key(api, scope_id, key, value_of(limit))
    over_cap = write_key(api, scope_id, key, value_of(limit + 1))

    assert at_cap.status_code == 201
    assert error_of(over_cap)["details"]["max_bytes"] == limit


# --- The whole meta -----------------------------------------------------------------------

# ``{"x-a":"`` + value + ``"}``: the compact JSON of a one-key meta is 10 bytes more
# than its value.
ONE_KEY_OVERHEAD = 10


def test_meta_exactly_at_1_mib_is_accepted_counting_non_ascii_as_utf8(
    api: ApiClient, scope_id: str
) -> None:
    value = text_of(MIB - ONE_KEY_OVERHEAD)

    response = api.put(session_path(scope_id), {"meta": {"x-a": value}})

    assert response.status_code == 201
    assert envelope_row(scope_id).meta == {"x-a": value}


def test_meta_one_byte_over_1_mib_is_422(api: ApiClient, scope_id: str) -> None:
    value = text_of(MIB - ONE_KEY_OVERHEAD + 1)

    response = api.put(session_path(scope_id), {"meta": {"x-a": value}})

    assert response.status_code == 422
    assert error_of(response)["details"] == {
        "field": "meta",
        "reason": "too_large",
        "bytes": MIB + 1,
        "max_bytes": MIB,
    }
    assert not SessionEnvelope.objects.exists()


def test_the_meta_cap_applies_to_the_result_of_a_worker_patch(
    api: ApiClient, scope_id: str
) -> None:
    host_meta = {"x-a": "v" * (MIB - ONE_KEY_OVERHEAD - 20)}
    api.put(session_path(scope_id), {"meta": host_meta})

    response = api.patch(session_path(scope_id), {"meta": {"cwd": "/" + "d" * 20}})

    assert response.status_code == 422
    assert error_of(response)["details"]["field"] == "meta"
    row = envelope_row(scope_id)
    assert (row.version, row.meta) == (1, host_meta)


def test_the_meta_cap_is_a_setting(
    api: ApiClient, scope_id: str, settings: Any
) -> None:
    settings.SESSION_META_MAX_BYTES = 100

    response = api.put(session_path(scope_id), {"meta": {"x-a": "v" * 91}})

    assert error_of(response)["details"]["max_bytes"] == 100


# --- Poison: stored values that break today's rules ------------------------------------------

VALID = {"selectedModel": "m", "statusSlot": "ok"}

POISON = [
    pytest.param({"cwd": 5}, id="wrong-type-worker-key"),
    pytest.param({"personaId": "p" * 300}, id="over-cap"),
    pytest.param({"reasoningEffort": "extreme"}, id="not-allowed"),
    pytest.param({"turnCursor": -1}, id="negative-cursor"),
    pytest.param({"turnCursor": True}, id="bool-cursor"),
    pytest.param({"attachedSkills": "not json"}, id="bad-json-text"),
    pytest.param({"workingNotes": 7}, id="notes-not-text"),
    pytest.param({"workingNotes": "n" * 40000}, id="notes-over-cap"),
    pytest.param({"retiredKey": "v"}, id="unknown-key"),
    pytest.param({"x-nested": {"a": 1}}, id="nested-value"),
]


def plant(scope_id: str, meta: Any) -> None:
    """Store ``meta`` as-is, bypassing every rule (an old row, a direct edit)."""
    SessionEnvelope.objects.filter(scope_id=scope_id).update(meta=meta)


@pytest.mark.parametrize("poison", POISON)
def test_poison_is_dropped_at_read_and_logged(
    api: ApiClient, scope_id: str, poison: dict, caplog: pytest.LogCaptureFixture
) -> None:
    api.put(session_path(scope_id), {"meta": {"selectedModel": "m"}})
    plant(scope_id, {**VALID, **poison})
    caplog.set_level(logging.WARNING, logger="powercontext.sessions")

    response = api.get(session_path(scope_id))

    assert response.status_code == 200
    assert response.json()["meta"] == VALID
    [record] = [r for r in caplog.records if r.name == "powercontext.sessions"]
    message = record.getMessage()
    assert f"scope={scope_id!r}" in message
    assert "session='sess-7'" in message
    assert f"key={next(iter(poison))!r}" in message


@pytest.mark.parametrize("poison", POISON)
def test_poison_is_not_carried_forward_by_the_next_write(
    api: ApiClient, scope_id: str, poison: dict
) -> None:
    api.put(session_path(scope_id), {"meta": {"selectedModel": "m"}})
    plant(scope_id, {**VALID, **poison})

    response = api.patch(session_path(scope_id), {"meta": {"turnRunId": "r"}})

    assert response.status_code == 200
    assert envelope_row(scope_id).meta == {**VALID, "turnRunId": "r"}


@pytest.mark.parametrize(
    ("poison", "fresh"),
    [
        ({"cwd": 5}, "/x"),
        ({"personaId": "p" * 300}, "p"),
        ({"reasoningEffort": "extreme"}, "low"),
        ({"turnCursor": -1}, 1),
        ({"attachedSkills": "not json"}, "[]"),
        ({"workingNotes": "n" * 40000}, "fresh notes"),
        ({"x-nested": {"a": 1}}, "flat"),
    ],
)
def test_a_poisoned_key_is_writable_again(
    api: ApiClient, scope_id: str, poison: dict, fresh: Any
) -> None:
    api.put(session_path(scope_id), {"meta": {"selectedModel": "m"}})
    plant(scope_id, poison)
    [key] = poison

    response = write_key(api, scope_id, key, fresh)

    assert response.status_code == 200, response.content
    assert response.json()["meta"] == {key: fresh}
    assert envelope_row(scope_id).meta == {key: fresh}


@pytest.mark.parametrize("stored", ["not an object", [1, 2], 5])
def test_a_stored_meta_that_is_not_an_object_reads_as_empty(
    api: ApiClient, scope_id: str, stored: Any
) -> None:
    api.put(session_path(scope_id), {"meta": {"selectedModel": "m"}})
    plant(scope_id, stored)

    read = api.get(session_path(scope_id))
    written = api.patch(session_path(scope_id), {"meta": {"cwd": "/a"}})

    assert (read.status_code, read.json()["meta"]) == (200, {})
    assert written.json()["meta"] == {"cwd": "/a"}
    assert envelope_row(scope_id).meta == {"cwd": "/a"}


def test_a_put_may_not_repeat_a_poisoned_worker_value(
    api: ApiClient, scope_id: str
) -> None:
    api.patch(session_path(scope_id), {"meta": {"cwd": "/a"}})
    plant(scope_id, {"cwd": 5})

    response = api.put(session_path(scope_id), {"meta": {"cwd": 5}})

    assert error_of(response)["code"] == "not_host_key"


def test_a_cap_lowered_after_the_fact_turns_stored_values_into_poison(
    api: ApiClient, scope_id: str, settings: Any
) -> None:
    api.patch(session_path(scope_id), {"meta": {"statusSlot": "x" * 50}})
    settings.STATUS_SLOT_MAX_BYTES = 10

    response = api.get(session_path(scope_id))

    assert response.json()["meta"] == {}


def test_owners_in_the_table_match_the_spec() -> None:
    owners = {key: rule.owner for key, rule in RESERVED_KEYS.items()}

    assert {k for k, o in owners.items() if o is Owner.HOST} == {
        "personaId",
        "personaSnapshot",
        "selectedModel",
        "reasoningEffort",
        "attachedSkills",
    }
    assert {k for k, o in owners.items() if o is Owner.WORKER} == {
        "cwd",
        "activeSandboxId",
        "turnRunId",
        "turnStatus",
        "turnCursor",
        "usage",
        "statusSlot",
        "modelMessagesPointer",
        "workingNotes",
    }
