"""Every JSON value the service accepts reads back as the same value, and every
value it returns is accepted again (docs/decisions/0004-json-round-trip.md).

PostgreSQL's jsonb and RFC 8785 canonical text print a float such as ``1e20`` as
``100000000000000000000``; read naively that is an integer outside +-(2^53-1),
which the API refuses on input and which an envelope's type-strict comparison sees
as another value. These tests run on both databases through the HTTP API:
hypothesis generates the values (floats of every magnitude, ``-0.0``, ``1`` vs
``1.0``, deep and wide objects, odd Unicode), and the named regressions of the
review are spelled out below them.

"The same JSON value" is RFC 8785's equality for Source content and metadata (the
digest's: ``1`` equals ``1.0``), and type-strict equality for envelope meta (which
keeps ``1`` and ``1.0`` apart). ``-0.0`` is ``0.0`` everywhere. A longer run:
``POWERCONTEXT_PROPERTY_EXAMPLES=2000 pytest tests/api/test_json_round_trip.py``.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from powercontext.canonical import canonical_json
from powercontext.jsonvalues import MAX_SAFE_INTEGER
from tests.conftest import ApiClient
from tests.handoffs import helpers as handoff

EXAMPLES = int(os.environ.get("POWERCONTEXT_PROPERTY_EXAMPLES", "25"))
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# The numbers the review found changed or refused, and their neighbours.
NAMED_FLOATS = [
    1e20,
    -2.5e17,
    123456789012345678.0,
    1e16,
    9.9e15,
    -0.0,
    0.0,
    1.0,
    5e-324,
    1.7976931348623157e308,
    -1e-7,
    2.0**53,
    float(MAX_SAFE_INTEGER),
]
FLOATS = st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
    NAMED_FLOATS
)
INTEGERS = st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
# Every storable character: no NUL, no lone surrogate; non-BMP, controls,
# combining marks, bidi controls and line separators included.
TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
    max_size=12,
)
SCALARS = st.none() | st.booleans() | INTEGERS | FLOATS | TEXT
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(TEXT, children, max_size=6)
    ),
    max_leaves=30,
)
ENVELOPE_SCALARS = st.booleans() | INTEGERS | FLOATS | TEXT.filter(bool)


def deep(levels: int) -> Any:
    value: Any = 1e20
    for level in range(levels):
        value = {"k": [value, level + 0.5]}
    return value


# Shapes hypothesis rarely reaches on its own.
SHAPED_VALUES = [
    deep(120),
    {f"k{index}": index * 1.5e15 for index in range(400)},
    [1e20] * 300,
    {"\u2028": "\U0001f600\u202e\u0301", "": [-0.0, 1.0, 1]},
]


def rfc8785_equal(left: Any, right: Any) -> bool:
    return canonical_json(left) == canonical_json(right)


def strictly_equal(left: Any, right: Any) -> bool:
    """Equal with JSON types kept apart: ``1`` is not ``1.0``, ``true`` not ``1``."""
    return type(left) is type(right) and left == right


def expected_scalar(value: Any) -> Any:
    """What the service keeps of a scalar: ``-0.0`` is ``0.0``."""
    return 0.0 if isinstance(value, float) and value == 0 else value


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex}"


# --- Source content ---------------------------------------------------------------


def _round_trip_content(api: ApiClient, scope_id: str, value: Any) -> None:
    created = api.post(f"/v1/scopes/{scope_id}/sources", {"content": value})
    assert created.status_code == 201, created.content
    record = created.json()
    read = api.get(
        f"/v1/scopes/{scope_id}/sources/content/{record['source_id']}"
    ).json()
    assert rfc8785_equal(read["content"], value)
    assert read["content_digest"] == record["content_digest"]
    again = api.post(f"/v1/scopes/{scope_id}/sources", {"content": read["content"]})
    assert again.status_code == 201, again.content
    assert again.json()["content_digest"] == record["content_digest"]


# Content is any JSON value but a blank string (refused as blank, api.md 6).
CONTENT_VALUES = JSON_VALUES.filter(
    lambda v: not (isinstance(v, str) and not v.strip())
)


@pytest.mark.django_db
@PROPERTY
@given(value=CONTENT_VALUES)
def test_created_content_reads_back_and_is_accepted_again(
    api: ApiClient, scope_id: str, value: Any
) -> None:
    _round_trip_content(api, scope_id, value)


@pytest.mark.django_db
@pytest.mark.parametrize("value", [*NAMED_FLOATS, *SHAPED_VALUES])
def test_named_content_values_round_trip(
    api: ApiClient, scope_id: str, value: Any
) -> None:
    _round_trip_content(api, scope_id, value)


# --- Source metadata --------------------------------------------------------------


def _round_trip_metadata(api: ApiClient, scope_id: str, metadata: Any) -> None:
    source_id = unique("meta")
    body = {
        "scope_id": scope_id,
        "source_id": source_id,
        "content": "text",
        "metadata": metadata,
    }
    assert api.post("/v1/sources/content", body).status_code == 202
    audit = api.get(f"/v1/scopes/{scope_id}/source-audit/content/{source_id}").json()
    assert rfc8785_equal(audit["metadata"], metadata)
    replay = api.post("/v1/sources/content", {**body, "metadata": audit["metadata"]})
    assert replay.status_code == 202, replay.content
    assert replay["Idempotent-Replayed"] == "true"


@pytest.mark.django_db
@PROPERTY
@given(metadata=st.dictionaries(TEXT, JSON_VALUES, max_size=6))
def test_metadata_reads_back_and_replays(
    api: ApiClient, scope_id: str, metadata: dict[str, Any]
) -> None:
    _round_trip_metadata(api, scope_id, metadata)


@pytest.mark.django_db
@pytest.mark.parametrize("value", [*NAMED_FLOATS, *SHAPED_VALUES])
def test_named_metadata_values_round_trip(
    api: ApiClient, scope_id: str, value: Any
) -> None:
    _round_trip_metadata(api, scope_id, {"n": value})


# --- Envelope meta ----------------------------------------------------------------


def _round_trip_meta(api: ApiClient, scope_id: str, meta: dict[str, Any]) -> None:
    path = f"/v1/scopes/{scope_id}/sessions/{unique('s')}/envelope"
    written = api.put(path, {"meta": meta})
    assert written.status_code == 201, written.content
    read = api.get(path).json()
    assert read["meta"].keys() == meta.keys()
    for key, value in meta.items():
        assert strictly_equal(read["meta"][key], expected_scalar(value)), key
    again = api.put(path, {"meta": read["meta"]})
    assert again.status_code == 200, again.content
    assert again.json()["version"] == 1  # the same value: no new version


@pytest.mark.django_db
@PROPERTY
@given(
    meta=st.dictionaries(TEXT.map(lambda key: f"x-{key}"), ENVELOPE_SCALARS, max_size=8)
)
def test_envelope_meta_reads_back_and_rewrites_as_a_no_op(
    api: ApiClient, scope_id: str, meta: dict[str, Any]
) -> None:
    _round_trip_meta(api, scope_id, meta)


@pytest.mark.django_db
@pytest.mark.parametrize("value", NAMED_FLOATS)
def test_named_envelope_floats_round_trip(
    api: ApiClient, scope_id: str, value: float
) -> None:
    _round_trip_meta(api, scope_id, {"x-big": value, "x-ok": 1.5, "x-int": 1})


@pytest.mark.django_db
def test_a_patch_keeps_a_large_float_of_the_host(api: ApiClient, scope_id: str) -> None:
    """The review's sequence: PUT 1e20, PUT again (no version), PATCH, GET."""
    path = f"/v1/scopes/{scope_id}/sessions/f1/envelope"
    body = {"meta": {"x-big": 1e20, "x-ok": 1.5}}
    assert api.put(path, body).status_code == 201
    assert api.put(path, body).json()["version"] == 1
    patched = api.patch(path, {"meta": {"turnStatus": "running"}})
    assert patched.json()["meta"] == {
        "x-big": 1e20,
        "x-ok": 1.5,
        "turnStatus": "running",
    }
    assert api.get(path).json()["meta"]["x-big"] == 1e20


# --- Handoff bodies ---------------------------------------------------------------


@pytest.mark.django_db
@PROPERTY
@given(objective=TEXT.filter(str.strip), text=TEXT.filter(str.strip))
def test_handoff_text_reads_back_exactly(
    api: ApiClient, scope_id: str, objective: str, text: str
) -> None:
    source_id = unique("cited")
    handoff.capture(api, scope_id, source_id)
    body = handoff.draft([handoff.sc(source_id)], objective=objective)
    body["state"][0]["text"] = text
    head = handoff.select(api, handoff.CONTINUE, scope_id, "latest").json()
    base = head["current_revision"]
    prepared = handoff.prepared(
        scope_id, body, base=None if base is None else base["revision"]
    )
    committed = handoff.commit(api, scope_id, prepared)
    assert committed.status_code == 200, committed.content
    latest = handoff.select(api, handoff.CONTINUE, scope_id, "latest").json()
    assert latest["content"] == handoff.content_of(body)


# --- What is on the wire ------------------------------------------------------------


@pytest.mark.django_db
def test_no_answer_carries_an_unsafe_integer_literal(
    api: ApiClient, scope_id: str
) -> None:
    """A large float is written as a float (``1e+20``), never as 21 digits."""
    created = api.post(f"/v1/scopes/{scope_id}/sources", {"content": {"n": 1e20}})
    read = api.get(
        f"/v1/scopes/{scope_id}/sources/content/{created.json()['source_id']}"
    )
    assert b"100000000000000000000" not in read.content
    assert json.loads(read.content)["content"] == {"n": 1e20}
