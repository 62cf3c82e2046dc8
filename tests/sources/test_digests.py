"""Properties of the value digest (api.md 5.3): what is equal, and what is not.

The digest is the SHA-256 of the RFC 8785 form of the value document, so it must
not depend on how a client happened to order keys or write a number (``1`` and
``1.0``), while values that differ as JSON - ``true`` and ``1``, ``"1"`` and ``1``,
a list and its reverse - must never share a digest. Hypothesis generates the
documents; the properties are stated without any digest computed in advance.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from powercontext.canonical import canonical_json, canonical_sha256
from powercontext.jsonvalues import MAX_SAFE_INTEGER
from sources.digests import SourceValue, value_digest

SAFE_INTEGERS = st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
SCALARS = (
    st.none()
    | st.booleans()
    | SAFE_INTEGERS
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
JSON = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=25,
)
OBJECTS = st.dictionaries(st.text(max_size=8), JSON, max_size=6)


def digest_of(content: Any, metadata: dict[str, Any]) -> str:
    return value_digest(SourceValue(content=content, metadata=metadata))


def reordered(value: Any) -> Any:
    """``value`` with every object's keys inserted in reverse order."""
    if isinstance(value, dict):
        return {key: reordered(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(item) for item in value]
    return value


def as_floats(value: Any) -> Any:
    """``value`` with every integer written as the equal float (``1`` -> ``1.0``)."""
    if isinstance(value, dict):
        return {key: as_floats(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_floats(item) for item in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


@given(content=JSON, metadata=OBJECTS)
def test_key_order_does_not_change_the_digest(
    content: Any, metadata: dict[str, Any]
) -> None:
    assert digest_of(reordered(content), reordered(metadata)) == digest_of(
        content, metadata
    )


@given(content=JSON, metadata=OBJECTS)
def test_integers_and_equal_floats_give_the_same_digest(
    content: Any, metadata: dict[str, Any]
) -> None:
    assert digest_of(as_floats(content), as_floats(metadata)) == digest_of(
        content, metadata
    )


@given(metadata=OBJECTS, key=st.text(max_size=8))
def test_true_and_1_are_different_values(metadata: dict[str, Any], key: str) -> None:
    assert digest_of("c", {**metadata, key: True}) != digest_of(
        "c", {**metadata, key: 1}
    )
    assert digest_of(True, metadata) != digest_of(1, metadata)


@given(metadata=OBJECTS, key=st.text(max_size=8), number=SAFE_INTEGERS)
def test_a_number_and_its_string_are_different_values(
    metadata: dict[str, Any], key: str, number: int
) -> None:
    assert digest_of("c", {**metadata, key: str(number)}) != digest_of(
        "c", {**metadata, key: number}
    )
    assert digest_of(str(number), metadata) != digest_of(number, metadata)


@given(items=st.lists(JSON, min_size=2, max_size=6, unique_by=canonical_json))
def test_list_order_changes_the_digest(items: list[Any]) -> None:
    assert digest_of(items[::-1], {}) != digest_of(items, {})
    assert digest_of("c", {"list": items[::-1]}) != digest_of("c", {"list": items})


@given(content=JSON, metadata=OBJECTS)
def test_the_digest_is_the_sha256_of_the_canonical_value_document(
    content: Any, metadata: dict[str, Any]
) -> None:
    """The document's fields are part of the value: a note differs from content."""
    document = {
        "content": content,
        "metadata": metadata,
        "working_note": False,
        "session_id": None,
        "note_kind": None,
        "expires_at": None,
    }

    assert digest_of(content, metadata) == canonical_sha256(document)
    assert digest_of(content, metadata) != value_digest(
        SourceValue(content=content, metadata=metadata, working_note=True)
    )


@given(
    # Bounds are naive by hypothesis' design; timezones= makes the values aware.
    instant=st.datetimes(
        min_value=datetime(1700, 1, 1),
        max_value=datetime(2250, 1, 1),
        timezones=st.just(UTC),
    ),
    offset_minutes=st.integers(-23 * 60 - 59, 23 * 60 + 59),
)
def test_expires_at_is_one_instant_whatever_its_offset(
    instant: datetime, offset_minutes: int
) -> None:
    shifted = instant.astimezone(timezone(timedelta(minutes=offset_minutes)))

    assert value_digest(
        SourceValue(content="c", metadata={}, expires_at=shifted)
    ) == value_digest(SourceValue(content="c", metadata={}, expires_at=instant))
    assert value_digest(
        SourceValue(
            content="c", metadata={}, expires_at=instant + timedelta(microseconds=1)
        )
    ) != value_digest(SourceValue(content="c", metadata={}, expires_at=instant))
