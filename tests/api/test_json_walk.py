"""The check every JSON body goes through after decoding (``api/parsers.py``).

It visits every string, key and number of the document; these tests hold its
locations, its order, its cap on errors, and that its memory grows with the depth
of the document, never with the number of values in it.
"""

from __future__ import annotations

import re
import tracemalloc
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from powercontext.api.parsers import (
    check_json_value,
    json_may_hold_a_problem,
    lenient_json_may_hold_a_problem,
    parse_json_object,
)
from powercontext.exceptions import RequestValidationError
from powercontext.inputs import MAX_ERROR_ITEMS


def errors_of(value: Any) -> list[dict[str, Any]]:
    with pytest.raises(RequestValidationError) as raised:
        check_json_value(value, ("body",))
    return raised.value.errors


def test_a_clean_document_passes() -> None:
    check_json_value(
        {"a": [1, 2.5, "x", True, None, {"b": [], "c": {}}], "é": "😀"}, ("body",)
    )


def test_each_problem_is_located_in_document_order() -> None:
    document = {
        "first": "nul\x00",
        "list": [0, {"deep": ["ok", "\ud800"]}, 2**60],
        "bad\x00key": 1,
        "last": "ok",
    }

    errors = errors_of(document)

    assert [(e["type"], e["loc"]) for e in errors] == [
        ("string_unstorable", ["body", "first"]),
        ("string_unstorable", ["body", "list", 1, "deep", 1]),
        ("number_unsupported", ["body", "list", 2]),
        ("string_unstorable", ["body", "bad\\x00key"]),
    ]


def test_a_problem_at_the_bottom_of_deep_nesting_is_located() -> None:
    depth = 500
    document: Any = "\x00"
    for _ in range(depth):
        document = [document]

    (error,) = errors_of({"deep": document})

    assert error["loc"] == ["body", "deep", *([0] * depth)]


def test_errors_are_capped() -> None:
    errors = errors_of({"many": ["\x00"] * (MAX_ERROR_ITEMS * 10)})

    assert len(errors) == MAX_ERROR_ITEMS
    assert errors[-1]["loc"] == ["body", "many", MAX_ERROR_ITEMS - 1]


def test_the_root_itself_is_checked() -> None:
    (error,) = errors_of("\x00")

    assert error["loc"] == ["body"]


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(lambda n: list(range(n)), id="a long list"),
        pytest.param(lambda n: {f"k{i}": i for i in range(n)}, id="a wide object"),
        pytest.param(lambda n: [[i] for i in range(n)], id="many small lists"),
    ],
)
def test_memory_grows_with_depth_not_with_size(build: Any) -> None:
    """Half a million values, checked within 64 KiB of extra memory (a path per
    value, as a naive walk keeps, would take tens of megabytes)."""
    document = {"values": build(500_000)}

    tracemalloc.start()
    try:
        check_json_value(document, ("body",))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert peak < 64 * 1024


def test_a_body_is_decoded_then_checked() -> None:
    with pytest.raises(RequestValidationError) as raised:
        parse_json_object(b'{"a": ["\\u0000"]}')

    assert raised.value.errors[0]["loc"] == ["body", "a", 0]


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        (b'{"a": "x\\u0000"}', ["body", "a"]),
        (b'{"\\u0000": 1}', ["body", "\\x00"]),
        (b'{"a": ["\\ud800"]}', ["body", "a", 0]),
        (b'{"a": ["\\uDC00x"]}', ["body", "a", 0]),
        (b'{"a": ["\\uDBFF"]}', ["body", "a", 0]),
        (b'{"a": 9007199254740992}', ["body", "a"]),
        (b'{"a": -9007199254740992}', ["body", "a"]),
        (b'{"a": 1e999}', ["body", "a"]),
        (b'{"a": 1E+400}', ["body", "a"]),
        (b'{"a": 1' + b"0" * 400 + b".5}", ["body", "a"]),
    ],
)
def test_every_kind_of_problem_is_found_in_a_body(body: bytes, loc: list) -> None:
    """The walk runs only for text that could hold a problem; these all could."""
    with pytest.raises(RequestValidationError) as raised:
        parse_json_object(body)

    assert [error["loc"] for error in raised.value.errors] == [loc]


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": "\\\\u0000 is text", "b": "\\ud83d\\ude00", "c": 9007199254740991}',
        b'{"a": 1e308, "b": 123456789012345.5, "c": 1e-400}',
    ],
)
def test_bodies_that_look_suspect_but_are_fine_pass(body: bytes) -> None:
    assert isinstance(parse_json_object(body), dict)


@pytest.mark.django_db
def test_a_deep_and_wide_body_costs_little_through_http(
    client_for: Any,
) -> None:
    """Regression: a 400 KB title 400 arrays deep and then wide, from a
    token whose only grant is on a scope that does not exist, took a worker from
    68 MB to 725 MB (a path copied per value). Now: 422, within 32 times the body
    plus a little, measured in this process."""
    api = client_for("scp_missing:contributor")
    depth = 400
    body = (
        b'{"title":'
        + b"[" * depth
        + b",".join([b"0"] * 200_000)
        + b"]" * depth
        + b',"summary":"s","idempotency_key":"k"}'
    )

    tracemalloc.start()
    try:
        response = api.post("/v1/scopes", raw=body)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert response.status_code == 422
    assert len(body) > 400_000
    assert peak < 32 * len(body)


# The hints as regular expressions (the parser looks for them faster, as
# substrings of the body's shape; these say what it must find).
HINTS = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])|[0-9]{16}|[eE][+-]?[0-9]{3}")
LENIENT_HINTS = re.compile(HINTS.pattern + rb"|NaN|Infinity|\xed[\xa0-\xbf]|\x00")
HINT_PIECES = [b"\\u", b"0000", b"d8", b"DB", b"e", b"E", b"+", b"-", b"12", b"123"]
HINT_PIECES += [b"e+", b"E-", b"5" * 8, b"NaN", b"Infinity", b"\xed\xa0", b"\x00"]
HINT_PIECES += [b'"', b" "]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(HINT_PIECES) | st.binary(max_size=4), max_size=30))
def test_the_hints_are_found_exactly_where_the_expressions_find_them(
    pieces: list[bytes],
) -> None:
    raw = b"".join(pieces)

    assert json_may_hold_a_problem(raw) == (HINTS.search(raw) is not None)
    assert lenient_json_may_hold_a_problem(raw) == (
        LENIENT_HINTS.search(raw) is not None
    )


@pytest.mark.parametrize("hint", [b"1" * 16, b"e+123", b"E999", b"-" + b"9" * 16])
@pytest.mark.parametrize("offset", range(-17, 2))
def test_a_number_hint_across_the_slices_of_a_large_body_is_found(
    hint: bytes, offset: int
) -> None:
    """The shape is made 64 KiB at a time: a hint astride two slices counts."""
    start = 64 * 1024 + offset
    raw = b"x" * start + hint + b"x" * 100

    assert json_may_hold_a_problem(raw)
    assert not json_may_hold_a_problem(raw.replace(hint, b"x" * len(hint)))
