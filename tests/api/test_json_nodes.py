"""The count of JSON nodes a body is refused for before it is read (``api/parsers.py``).

A node is an object, an array or an object member: what costs the parser an object
or a key table. The count is of bytes, not of the decoded value, so these tests hold
it to the decoded value's own count on generated documents, whatever their strings
hold and wherever the slices it works in are cut.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from powercontext.api.exceptions import RequestTooLarge
from powercontext.api.parsers import check_json_nodes, json_nodes, max_json_nodes

# Strings made mostly of what the count looks for, and of what could mislead it.
TRICKY_TEXT = st.text(st.sampled_from('[]{}:,"\\/ aé😀\n\u2028'), max_size=12)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TRICKY_TEXT,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(TRICKY_TEXT, inner, max_size=5)
    ),
    max_leaves=30,
)


def decoded_nodes(value: Any) -> int:
    if isinstance(value, list):
        return 1 + sum(decoded_nodes(item) for item in value)
    if isinstance(value, dict):
        return 1 + len(value) + sum(decoded_nodes(item) for item in value.values())
    return 0


@settings(max_examples=300)
@given(
    value=VALUES,
    ascii_only=st.booleans(),
    indent=st.none() | st.just(1),
    slice_bytes=st.sampled_from([1, 2, 7, 64, 256 * 1024]),
)
@example(
    value={"a": ['"[', "\\", '\\"{']}, ascii_only=False, indent=None, slice_bytes=1
)
def test_the_count_is_the_decoded_values(
    value: Any,
    ascii_only: bool,
    indent: int | None,
    slice_bytes: int,
) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only, indent=indent).encode()

    assert json_nodes(raw, slice_bytes=slice_bytes) == decoded_nodes(value)


@pytest.mark.parametrize(
    ("raw", "nodes"),
    [
        (b'["[{:', 1),  # an unterminated string holds none: parsing stops there
        (b'[{"a":' + b'"' + b"[" * 600_000 + b'"}]', 3),  # a string longer than a slice
        (b"", 0),
    ],
)
def test_what_is_not_json_is_counted_as_far_as_it_is(raw: bytes, nodes: int) -> None:
    assert json_nodes(raw) == nodes


def test_a_small_body_is_never_refused_whatever_it_holds() -> None:
    size = 335_544  # 7/32 of it plus 262,144 is itself
    assert max_json_nodes(size) == size

    check_json_nodes(b"[" * size)


def test_the_first_body_over_the_count_is_refused() -> None:
    size = 400_000
    at_the_limit = b"[" * max_json_nodes(size) + b" " * (size - max_json_nodes(size))

    check_json_nodes(at_the_limit)
    with pytest.raises(RequestTooLarge) as refused:
        check_json_nodes(at_the_limit.replace(b" ", b"{", 1))

    assert refused.value.details == {
        "reason": "too_many_nodes",
        "nodes": max_json_nodes(size) + 1,
        "max_nodes": max_json_nodes(size),
    }
