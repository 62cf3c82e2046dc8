"""Strict request validation: no coercion, no unknown keys, ``{type, loc, msg}`` errors.

DRF's stock fields coerce (``5`` becomes ``"5"``, ``" a "`` is trimmed, a naive
datetime is read in the server's zone). The API promises the opposite, so input
serializers are built from the strict fields here, and ``validate_body`` /
``validate_query`` / ``validate_path`` turn any failure into a 422 whose ``loc``
starts with where the value was: ``body``, ``query`` or ``path``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail, ValidationError
from rest_framework.settings import api_settings

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

from .exceptions import BadRequest

# DRF's generic codes, renamed to the vocabulary the reference uses.
_DRF_CODE_TO_TYPE = {
    "required": "missing",
    "null": "none_forbidden",
    "blank": "string_too_short",
    "max_length": "string_too_long",
    "min_length": "string_too_short",
    "invalid_choice": "enum",
    "max_value": "less_than_equal",
    "min_value": "greater_than_equal",
    "not_a_list": "list_type",
    "not_a_dict": "dict_type",
    "empty": "too_short",
    "max_string_length": "int_parsing",
}


def safe_loc_part(part: str | int) -> str | int:
    """A loc element that is itself safe to render (escapes NUL and surrogates)."""
    if isinstance(part, int) or text_problem(part) is None:
        return part
    return part.encode("unicode_escape").decode("ascii")


def check_json_value(value: Any, loc: list[str | int]) -> None:
    """Reject unstorable strings (keys too) and non-canonical numbers in ``value``.

    Iterative, so a deeply nested document cannot exhaust the stack.
    """
    errors: list[dict[str, Any]] = []
    stack: list[tuple[Any, list[str | int]]] = [(value, loc)]
    while stack and len(errors) < 20:
        node, where = stack.pop()
        if isinstance(node, str):
            problem = text_problem(node)
            if problem:
                errors.append(_item("string_unstorable", where, f"String {problem}."))
        elif isinstance(node, (int, float)):
            problem = number_problem(node)
            if problem:
                errors.append(
                    _item("number_unsupported", where, f"Number invalid: {problem}.")
                )
        elif isinstance(node, dict):
            for key, child in node.items():
                key_problem = text_problem(key)
                if key_problem:
                    errors.append(
                        _item(
                            "string_unstorable",
                            [*where, key],
                            f"Object key {key_problem}.",
                        )
                    )
                stack.append((child, [*where, key]))
        elif isinstance(node, list):
            stack.extend((child, [*where, index]) for index, child in enumerate(node))
    if errors:
        raise RequestValidationError(errors)


def _item(type_: str, loc: Iterable[str | int], msg: str) -> dict[str, Any]:
    return {"type": type_, "loc": [safe_loc_part(part) for part in loc], "msg": msg}


# --- DRF error conversion -------------------------------------------------------------


def errors_from_drf(detail: Any, prefix: list[str | int]) -> list[dict[str, Any]]:
    """Flatten a DRF ``ValidationError.detail`` into ``{type, loc, msg}`` items."""
    items: list[dict[str, Any]] = []

    def walk(node: Any, loc: list[str | int]) -> None:
        if isinstance(node, Mapping):
            for key, child in node.items():
                walk(
                    child,
                    loc if key == api_settings.NON_FIELD_ERRORS_KEY else [*loc, key],
                )
        elif isinstance(node, list):
            for child in node:
                walk(child, loc)
        else:
            code = getattr(node, "code", None) or "value_error"
            items.append(_item(_DRF_CODE_TO_TYPE.get(code, code), loc, str(node)))

    walk(detail, list(prefix))
    return items


# --- Strict fields --------------------------------------------------------------------


class StrictCharField(serializers.CharField):
    """A string, never coerced from another type and never trimmed."""

    default_error_messages = {"string_type": "Input should be a valid string."}

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("string_type")
        return super().to_internal_value(data)


class NotBlankCharField(StrictCharField):
    """A string that must contain a non-whitespace character."""

    default_error_messages = {
        "string_pattern_mismatch": "Must contain a non-whitespace character."
    }

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if not value.strip():
            self.fail("string_pattern_mismatch")
        return value


class IdentityField(NotBlankCharField):
    """An identity string (1..256 characters, not blank), compared byte-exactly.

    ``reject_padding`` also refuses leading or trailing whitespace, as the registry
    does for ``source_id``.
    """

    default_error_messages = {"padded": "Must not start or end with whitespace."}

    def __init__(self, *, reject_padding: bool = False, **kwargs: Any) -> None:
        self.reject_padding = reject_padding
        kwargs.setdefault("max_length", IDENTITY_MAX_LENGTH)
        kwargs.setdefault("min_length", 1)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if self.reject_padding and value != value.strip():
            self.fail("padded")
        return value


class StrictChoiceField(serializers.ChoiceField):
    """One of fixed string values; a non-string is a type error, not a lookup miss."""

    default_error_messages = {"string_type": "Input should be a valid string."}

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            self.fail("string_type")
        if data not in self.choices:
            raise ValidationError(
                ErrorDetail(
                    "Input should be one of: "
                    + ", ".join(map(str, self.choices))
                    + ".",
                    code="enum",
                )
            )
        return data


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer (not a bool, not a float, not a numeric string)."""

    default_error_messages = {"int_type": "Input should be a valid integer."}

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("int_type")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    default_error_messages = {"bool_type": "Input should be a valid boolean."}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("bool_type")
        return data


@extend_schema_field(OpenApiTypes.DATETIME)
class StrictDateTimeField(serializers.Field):
    """An RFC 3339 string with an explicit offset and at most 6 fractional digits.

    Returns an aware ``datetime`` in UTC. Naive datetimes and numbers are rejected,
    and so are instants outside ``EARLIEST_DATETIME``..``LATEST_DATETIME`` (about
    1684 to 2255), which a value digest cannot represent.
    """

    default_error_messages = {
        "datetime_type": "Input should be an RFC 3339 date-time string.",
        "datetime_format": (
            "Input should be an RFC 3339 date-time with an explicit offset "
            "(Z or +hh:mm) "
            "and at most 6 fractional digits."
        ),
        "datetime_range": (
            "Input should be a date-time between "
            f"{format_datetime(EARLIEST_DATETIME)} and "
            f"{format_datetime(LATEST_DATETIME)}."
        ),
    }

    def to_internal_value(self, data: Any) -> datetime:
        if not isinstance(data, str):
            self.fail("datetime_type")
        if not RFC3339.match(data):
            self.fail("datetime_format")
        try:
            parsed = datetime.fromisoformat(data.replace("z", "Z").replace("t", "T"))
        except ValueError:
            self.fail("datetime_format")
        try:
            instant = parsed.astimezone(UTC)
        except OverflowError:  # e.g. 0001-01-01T00:00:00+01:00 is before year 1
            self.fail("datetime_range")
        if not EARLIEST_DATETIME <= instant <= LATEST_DATETIME:
            self.fail("datetime_range")
        return instant

    def to_representation(self, value: datetime) -> str:
        return format_datetime(value)


@extend_schema_field({"type": "object", "additionalProperties": True})
class StrictJSONObjectField(serializers.Field):
    """A JSON object (dict); ``allow_null`` admits ``null``."""

    default_error_messages = {"dict_type": "Input should be a JSON object."}

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            self.fail("dict_type")
        return data

    def to_representation(self, value: Any) -> Any:
        return value


@extend_schema_field(OpenApiTypes.ANY)
class AnyJSONField(serializers.Field):
    """Any JSON value, already checked by the parser."""

    def to_internal_value(self, data: Any) -> Any:
        return data

    def to_representation(self, value: Any) -> Any:
        return value


class StrictListField(serializers.ListField):
    default_error_messages = {"list_type": "Input should be a JSON array."}

    def to_internal_value(self, data: Any) -> list[Any]:
        if not isinstance(data, list):
            self.fail("list_type")
        return super().to_internal_value(data)


@extend_schema_field(OpenApiTypes.INT)
class QueryIntegerField(serializers.Field):
    """An integer query parameter written in ASCII decimal digits."""

    default_error_messages = {"int_parsing": "Input should be a valid integer."}

    def to_internal_value(self, data: Any) -> int:
        value = parse_decimal_integer(data) if isinstance(data, str) else None
        if value is None:
            self.fail("int_parsing")
        return value


@extend_schema_field(OpenApiTypes.BOOL)
class QueryBooleanField(serializers.Field):
    """A boolean query parameter: ``true``/``false`` (also ``1``/``0``)."""

    default_error_messages = {"bool_parsing": "Input should be true or false."}
    _values = {"true": True, "1": True, "false": False, "0": False}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, str) or data.lower() not in self._values:
            self.fail("bool_parsing")
        return self._values[data.lower()]


class StrictSerializer(serializers.Serializer):
    """A plain input serializer that rejects unknown keys and non-object input."""

    default_error_messages = {"dict_type": "Input should be a JSON object."}

    def get_fields(self) -> dict[str, serializers.Field]:
        """Copies of the declared fields, cheaply where that is safe.

        DRF deep-copies every declared field for every instance, which re-runs each
        field's ``__init__`` - a tenth of a capture's CPU. A scalar field keeps no
        state between validations (binding sets attributes on the copy), so a
        shallow copy is enough; fields holding other fields (lists, nested
        serializers) are still deep-copied, as their children get bound to them.
        """
        return {
            name: copy.deepcopy(field) if _has_children(field) else copy.copy(field)
            for name, field in self._declared_fields.items()
        }

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, Mapping):
            raise ValidationError(
                {
                    api_settings.NON_FIELD_ERRORS_KEY: [
                        ErrorDetail("Input should be a JSON object.", code="dict_type")
                    ]
                }
            )
        extra = {
            key: [
                ErrorDetail("Extra inputs are not permitted.", code="extra_forbidden")
            ]
            for key in data
            if key not in self.fields
        }
        try:
            value = super().to_internal_value(data)
        except ValidationError as exc:
            detail = (
                exc.detail
                if isinstance(exc.detail, dict)
                else {api_settings.NON_FIELD_ERRORS_KEY: exc.detail}
            )
            raise ValidationError({**detail, **extra}) from exc
        if extra:
            raise ValidationError(extra)
        return value


def _has_children(field: serializers.Field) -> bool:
    return isinstance(
        field,
        (serializers.ListField, serializers.DictField, serializers.BaseSerializer),
    )


# --- Entry points used by views ---------------------------------------------------


def validate_body(
    serializer_class: type[serializers.Serializer], data: Any, **context: Any
) -> Any:
    """Validate a parsed JSON body; 422 with ``loc`` starting at ``body``."""
    serializer = serializer_class(data=data, context=context)
    if not serializer.is_valid():
        raise RequestValidationError(errors_from_drf(serializer.errors, ["body"]))
    return serializer.validated_data


def validate_query(
    serializer_class: type[serializers.Serializer],
    query: Any,
    *,
    invalid_status: int = 422,
) -> Any:
    """Validate query parameters.

    Unknown, repeated or unstorable parameters are always 422. Invalid values are
    ``invalid_status``: the Source lists answer 400 there, as the reference does.
    """
    values: dict[str, str] = {}
    errors: list[dict[str, Any]] = []
    known = serializer_class().fields
    for key, key_values in query.lists():
        for value in (key, *key_values):
            problem = text_problem(value)
            if problem:
                errors.append(
                    _item("string_unstorable", ["query", key], f"Parameter {problem}.")
                )
        if len(key_values) > 1:
            errors.append(
                _item(
                    "repeated_parameter",
                    ["query", key],
                    "Parameter given more than once.",
                )
            )
        if key not in known:
            errors.append(
                _item("extra_forbidden", ["query", key], "Unknown parameter.")
            )
        values[key] = key_values[-1]
    if errors:
        raise RequestValidationError(errors)
    serializer = serializer_class(data=values)
    if not serializer.is_valid():
        items = errors_from_drf(serializer.errors, ["query"])
        if invalid_status == 400:
            raise BadRequest(details={"errors": items})
        raise RequestValidationError(items)
    return serializer.validated_data


def validate_path(**parameters: str) -> None:
    """Check path identity parameters: 1..256 characters, not blank, storable text."""
    errors: list[dict[str, Any]] = []
    for name, value in parameters.items():
        problem = text_problem(value)
        if problem:
            errors.append(
                _item("string_unstorable", ["path", name], f"Parameter {problem}.")
            )
        elif not value.strip():
            errors.append(
                _item("string_pattern_mismatch", ["path", name], "Must not be blank.")
            )
        elif len(value) > IDENTITY_MAX_LENGTH:
            errors.append(
                _item(
                    "string_too_long",
                    ["path", name],
                    "Must have at most 256 characters.",
                )
            )
    if errors:
        raise RequestValidationError(errors)
