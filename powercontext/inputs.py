"""Strict request models: the building blocks every operation's input is made of.

Each operation has one pydantic v2 model (``<app>/inputs.py``) that checks the
shape of its input and nothing else: types without coercion, no unknown keys
(``extra="forbid"``), lengths, enumerations and the identity rules of
``powercontext.text``. The same model documents the operation in OpenAPI and
types its MCP tool. Domain rules (reserved keys, replay or conflict, expiry in
the future) stay in the services.

``validate_input`` runs a model and turns a failure into one
``RequestValidationError`` whose items are ``{type, loc, msg}``, ``loc`` starting
with where the value was (``body``, ``query``, ``path``). The item types are
pydantic's, with the few names this API has always used instead
(``ERROR_TYPES``): ``enum`` for a value outside a fixed set, ``dict_type`` for a
non-object where an object belongs, ``none_forbidden`` for ``null`` where a value
is required. The messages are pydantic's own, as the reference's are.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    PlainValidator,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    WithJsonSchema,
)
from pydantic_core import PydanticCustomError

from powercontext.exceptions import RequestValidationError
from powercontext.text import (
    EARLIEST_DATETIME,
    IDENTITY_MAX_LENGTH,
    LATEST_DATETIME,
    RFC3339,
    format_datetime,
    number_problem,
    parse_decimal_integer,
    text_problem,
)

Loc = tuple[str | int, ...]
ErrorItem = dict[str, Any]
# pydantic's error types renamed to the vocabulary this API has always answered
# (``model_attributes_type``: a non-object where a tagged union's object belongs).
ERROR_TYPES = {
    "literal_error": "enum",
    "model_type": "dict_type",
    "model_attributes_type": "dict_type",
}
_TYPE_ERRORS = frozenset(
    {"string_type", "int_type", "bool_type", "list_type", "dict_type", "enum"}
)
# No answer lists more problems than this: a body of a million bad items must not
# become a million error items.
MAX_ERROR_ITEMS = 20


class StrictInput(BaseModel):
    """Base of every request model: strict types, unknown keys refused.

    ``cross_field_errors`` is the place for rules between fields (one needs
    another, two must agree); it runs only when every field is valid and returns
    ``(loc, type, msg)`` problems, so they can point at any nested field.
    """

    model_config = ConfigDict(
        strict=True, extra="forbid", frozen=True, hide_input_in_errors=True
    )

    def cross_field_errors(self) -> Iterable[tuple[Loc, str, str]]:
        return ()


Model = TypeVar("Model", bound=StrictInput)


def validate_input(model: type[Model], data: Any, *, where: str) -> Model:
    """``data`` validated by ``model``; raises ``RequestValidationError`` (422)."""
    try:
        value = model.model_validate(data)
    except ValidationError as exc:
        raise RequestValidationError(validation_errors(exc, where=where)) from None
    problems = list(value.cross_field_errors())
    if problems:
        raise RequestValidationError(
            [error_item((where, *loc), type_, msg) for loc, type_, msg in problems]
        )
    return value


def validation_errors(exc: ValidationError, *, where: str) -> list[ErrorItem]:
    """The ``{type, loc, msg}`` items of a pydantic error, ``loc`` under ``where``."""
    items = []
    for error in exc.errors(include_url=False, include_context=False)[:MAX_ERROR_ITEMS]:
        type_ = ERROR_TYPES.get(error["type"], error["type"])
        msg = error["msg"]
        given = error.get("input", ...)
        if type_ in _TYPE_ERRORS and given is None:
            type_, msg = "none_forbidden", "Input should not be null."
        elif type_ == "enum" and not isinstance(given, str):
            # Every enumeration here is of strings: say what was wrong first.
            type_, msg = "string_type", "Input should be a valid string."
        items.append(error_item((where, *error["loc"]), type_, msg))
    return items


def error_item(loc: Sequence[str | int], type_: str, msg: str) -> ErrorItem:
    """One error item; ``loc`` parts that cannot be stored are shown escaped."""
    return {"type": type_, "loc": [safe_loc_part(part) for part in loc], "msg": msg}


def safe_loc_part(part: str | int) -> str | int:
    """A loc element that is itself safe to render (escapes NUL and surrogates)."""
    if isinstance(part, int) or text_problem(part) is None:
        return part
    return part.encode("unicode_escape").decode("ascii")


# --- Strings --------------------------------------------------------------------------


def _not_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError(
            "string_pattern_mismatch", "Must contain a non-whitespace character."
        )
    return value


def _not_padded(value: str) -> str:
    if value != value.strip():
        raise PydanticCustomError("padded", "Must not start or end with whitespace.")
    return value


# Annotate a string type with these, after its StringConstraints (a length
# constraint placed after a validator would report ``too_long``, not
# ``string_too_long``): ``Annotated[str, StringConstraints(...), NOT_BLANK]``.
NOT_BLANK = AfterValidator(_not_blank)
NOT_PADDED = AfterValidator(_not_padded)

# An identity (scope, session, source type): 1..256 characters, not blank,
# compared byte for byte (never trimmed, never normalised).
Identity = Annotated[
    str, StringConstraints(min_length=1, max_length=IDENTITY_MAX_LENGTH), NOT_BLANK
]
# A Source id: an identity without leading or trailing whitespace.
SourceId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=IDENTITY_MAX_LENGTH),
    NOT_BLANK,
    NOT_PADDED,
]


# --- Times ----------------------------------------------------------------------------


# The reference validates its date-times with pydantic's ``AwareDatetime``: a string
# it refuses gets the error type it would give (``timezone_aware`` for a naive time,
# ``datetime_from_date_parsing`` for an unparseable one), so a client sees the same
# ``type`` from both servers. Strings it accepts and we do not (more than 6
# fractional digits, no seconds, ``+hhmm``) get our own ``datetime_format``.
_REFERENCE_DATETIME = TypeAdapter(AwareDatetime)


def _not_rfc3339(value: str) -> PydanticCustomError:
    try:
        _REFERENCE_DATETIME.validate_python(value)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        return PydanticCustomError(first["type"], first["msg"])
    return PydanticCustomError(
        "datetime_format",
        "Input should be an RFC 3339 date-time with an explicit offset "
        "(Z or +hh:mm) and at most 6 fractional digits.",
    )


def _rfc3339(value: Any) -> datetime:
    if not isinstance(value, str):
        raise PydanticCustomError(
            "datetime_type", "Input should be an RFC 3339 date-time string."
        )
    if not RFC3339.match(value):
        raise _not_rfc3339(value)
    try:
        parsed = datetime.fromisoformat(value.replace("z", "Z").replace("t", "T"))
        instant = parsed.astimezone(UTC)
    except ValueError:
        raise _not_rfc3339(value) from None
    except OverflowError:  # e.g. 0001-01-01T00:00:00+01:00 is before year 1
        instant = None
    if instant is None or not EARLIEST_DATETIME <= instant <= LATEST_DATETIME:
        raise PydanticCustomError(
            "datetime_range",
            "Input should be a date-time between {earliest} and {latest}.",
            {
                "earliest": format_datetime(EARLIEST_DATETIME),
                "latest": format_datetime(LATEST_DATETIME),
            },
        )
    return instant


# An RFC 3339 string with an explicit offset, as an aware UTC datetime. Naive
# times and numbers are refused, and so are instants a value digest cannot hold.
DateTime = Annotated[
    datetime,
    PlainValidator(_rfc3339),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]


# --- Query values ---------------------------------------------------------------------


def _query_integer(value: Any) -> int:
    parsed = parse_decimal_integer(value) if isinstance(value, str) else None
    if parsed is None:
        raise PydanticCustomError("int_parsing", "Input should be a valid integer.")
    return parsed


_QUERY_BOOLEANS = {"true": True, "1": True, "false": False, "0": False}


def _query_boolean(value: Any) -> bool:
    if not isinstance(value, str) or value.lower() not in _QUERY_BOOLEANS:
        raise PydanticCustomError("bool_parsing", "Input should be true or false.")
    return _QUERY_BOOLEANS[value.lower()]


# An integer written in ASCII decimal digits (a query parameter).
QueryInteger = Annotated[
    int, PlainValidator(_query_integer), WithJsonSchema({"type": "integer"})
]
# ``true``/``false`` (also ``1``/``0``), any case (a query parameter).
QueryBoolean = Annotated[
    bool, PlainValidator(_query_boolean), WithJsonSchema({"type": "boolean"})
]


def bounded(low: int, high: int | None = None) -> Callable[[int], int]:
    """An after-validator keeping an integer within ``low``..``high``."""

    def check(value: int) -> int:
        if value < low or (high is not None and value > high):
            bound = (
                f"between {low} and {high}" if high is not None else f"at least {low}"
            )
            raise PydanticCustomError("out_of_range", f"Input should be {bound}.")
        return value

    return check


def unique_items(field: str, values: Sequence[Any]) -> list[tuple[Loc, str, str]]:
    """A ``cross_field_errors`` problem when ``values`` repeats an item."""
    if len(set(values)) == len(values):
        return []
    return [((field,), "unique_items", "Items must be unique.")]


# --- JSON values ----------------------------------------------------------------------


def check_json_value(value: Any, loc: Loc) -> None:
    """Reject unstorable strings (keys too) and non-canonical numbers in ``value``.

    A depth-first walk in document order with one iterator per open container
    and one shared path: memory grows with the nesting depth, never with the
    number of values, and a location is built only for a value that fails.
    """
    errors: list[ErrorItem] = []
    path: list[str | int] = list(loc)
    _check_leaf(value, path, errors)
    open_containers = [_children(value)] if isinstance(value, (dict, list)) else []
    while open_containers and len(errors) < MAX_ERROR_ITEMS:
        entry = next(open_containers[-1], None)
        if entry is None:
            open_containers.pop()
            if open_containers:
                path.pop()
            continue
        key, child = entry
        if isinstance(key, str) and (key_problem := text_problem(key)):
            errors.append(
                error_item(
                    (*path, key), "string_unstorable", f"Object key {key_problem}."
                )
            )
        path.append(key)
        if isinstance(child, (dict, list)):
            open_containers.append(_children(child))
        else:
            _check_leaf(child, path, errors)
            path.pop()
    if errors:
        raise RequestValidationError(errors[:MAX_ERROR_ITEMS])


def _children(container: dict[str, Any] | list[Any]) -> Iterator[tuple[Any, Any]]:
    if isinstance(container, dict):
        return iter(container.items())
    return enumerate(container)


def _check_leaf(node: Any, path: list[str | int], errors: list[ErrorItem]) -> None:
    if isinstance(node, str) and (problem := text_problem(node)):
        errors.append(error_item(path, "string_unstorable", f"String {problem}."))
    elif isinstance(node, (int, float)) and (problem := number_problem(node)):
        errors.append(
            error_item(path, "number_unsupported", f"Number invalid: {problem}.")
        )
