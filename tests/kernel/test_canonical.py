"""Our RFC 8785 serialiser writes exactly the bytes of the ``rfc8785`` package.

``powercontext.canonical`` replaces the package on every path (bounded memory,
no recursion, C-speed strings; docs/decisions/0007); the package stays as the
oracle: hypothesis generates JSON values and both must agree byte for byte.
"""

from __future__ import annotations

import hashlib
import tracemalloc
from datetime import UTC, datetime
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from powercontext.canonical import (
    CanonicalizationError,
    CanonicalTooLarge,
    canonical_json,
    canonical_text,
    ecmascript_number,
)
from powercontext.jsonvalues import MAX_SAFE_INTEGER
from sources.digests import SourceValue, value_digest

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)))
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
JSON = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(TEXT, children, max_size=6)
    ),
    max_leaves=40,
)


@settings(deadline=None)
@given(value=JSON)
def test_bytes_equal_the_reference_implementation(value: Any) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


FLAT = (
    st.none() | st.booleans() | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER) | TEXT
)


@settings(deadline=None)
@given(flat=st.lists(FLAT, min_size=17, max_size=60), other=JSON)
def test_long_flat_lists_equal_the_reference_implementation(
    flat: list[Any], other: Any
) -> None:
    """A long list of flat scalars is written by json in one call."""
    value = [flat, {"k": flat, "other": other}, [*flat, 0.5]]

    assert canonical_json(value) == rfc8785.dumps(value)


@settings(deadline=None)
@given(number=st.floats(allow_nan=False, allow_infinity=False))
def test_numbers_are_written_as_ecmascript_writes_them(number: float) -> None:
    assert ecmascript_number(number) == rfc8785.dumps(number).decode()


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e-7, "1.5e-7"),
        (1e-6, "0.000001"),
        (-0.0, "0"),
        (123456789012345678.0, "123456789012345680"),
        (0.1, "0.1"),
        (5e-324, "5e-324"),
    ],
)
def test_named_numbers(number: float, text: str) -> None:
    assert ecmascript_number(number) == text


def test_nesting_far_deeper_than_the_recursion_limit_is_serialised() -> None:
    value: Any = 1
    for _ in range(100_000):
        value = [value]

    assert canonical_json(value) == b"[" * 100_000 + b"1" + b"]" * 100_000


@pytest.mark.parametrize(
    "value",
    [float("nan"), float("inf"), 2**53, {1: "a"}, object(), "\ud800", {"\udfff": 1}],
)
def test_values_rfc8785_cannot_hold_are_refused(value: Any) -> None:
    with pytest.raises(CanonicalizationError):
        canonical_json(value)


@settings(deadline=None)
@given(
    content=JSON,
    metadata=st.dictionaries(TEXT, JSON, max_size=4),
    note=st.booleans(),
    expires=st.none()
    | st.datetimes(
        min_value=datetime(1700, 1, 1),
        max_value=datetime(2250, 1, 1),
        timezones=st.just(UTC),
    ),
)
def test_the_spliced_value_digest_is_the_document_digest(
    content: Any, metadata: dict[str, Any], note: bool, expires: datetime | None
) -> None:
    value = SourceValue(
        content=content,
        metadata=metadata,
        working_note=note,
        session_id="s" if note else None,
        note_kind="inspection" if note else None,
        expires_at=expires,
    )
    expected = hashlib.sha256(rfc8785.dumps(value.document())).hexdigest()

    assert value_digest(value) == expected


# --- A cap on the size --------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        [{"é": [i, "x" * (i % 7)]} for i in range(3000)],
        {"k": ["😀" * 50] * 400},
        "a" * 5000,
        {"flat": "b" * 5000},
    ],
)
def test_a_cap_refuses_with_the_exact_size(value: Any) -> None:
    text = canonical_text(value)
    size = len(text.encode("utf-8"))

    assert canonical_text(value, max_bytes=size) == text
    with pytest.raises(CanonicalTooLarge) as refused:
        canonical_text(value, max_bytes=size - 1)
    assert refused.value.size == size


def test_refusing_a_large_value_keeps_no_more_than_a_few_times_the_cap() -> None:
    """The text kept is at most the cap (held four bytes a character while it is
    measured); the whole value, about 7 MB as text, is never held."""
    value = [[i, {"k": i}] for i in range(400_000)]
    cap = 256 * 1024

    tracemalloc.start()
    try:
        with pytest.raises(CanonicalTooLarge):
            canonical_text(value, max_bytes=cap)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert peak < 16 * cap
