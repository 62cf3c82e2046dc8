"""What a view takes from a request: the body, the query and the path, validated.

Each is validated by the operation's strict model (``powercontext.inputs``) and
fails with a 422 whose ``loc`` starts with where the value was. Bodies were
already parsed and checked for unstorable text and numbers by the JSON parser;
query and path values are checked for unstorable text here. A query key that is
unknown or repeated is always 422; an invalid query value is 400 where the
reference answers 400 (the Source lists), 422 elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

from django.http import QueryDict
from rest_framework.request import Request

from powercontext.exceptions import RequestValidationError
from powercontext.inputs import ErrorItem, StrictInput, error_item, validate_input
from powercontext.text import text_problem

from .exceptions import BadRequest

Model = TypeVar("Model", bound=StrictInput)


def parse_body(model: type[Model], request: Request) -> Model:
    """The request body (``request.data``) validated by ``model``.

    The decoded body is then emptied. DRF's request and the view refer to each
    other, so whatever the request holds is freed only by Python's cyclic garbage
    collector, which may not run for many requests: a large body would stay in the
    worker long after its answer (docs/operations.md, memory per request). The
    request keeps the same, now empty, object; nothing reads it after this.
    """
    data = request.data
    try:
        return validate_input(model, data, where="body")
    finally:
        # A parsed JSON object or array; a QueryDict (a form body) is immutable and
        # small (Django limits its fields).
        if type(data) in (dict, list):
            data.clear()


def parse_query(
    model: type[Model], query: QueryDict, *, invalid_status: int = 422
) -> Model:
    """The query string validated by ``model`` (one value per key)."""
    return _parse_query_lists(model, query.lists(), invalid_status)


def parse_query_values(
    model: type[Model], query: Mapping[str, str], *, invalid_status: int = 422
) -> Model:
    """Query values given one per key (an MCP tool's arguments, as the text a URL
    would carry them), validated exactly as ``parse_query`` validates a URL's."""
    return _parse_query_lists(
        model, ((key, [value]) for key, value in query.items()), invalid_status
    )


def _parse_query_lists(
    model: type[Model],
    lists: Iterable[tuple[str, list[str]]],
    invalid_status: int,
) -> Model:
    values: dict[str, str] = {}
    errors: list[ErrorItem] = []
    for key, key_values in lists:
        for value in (key, *key_values):
            problem = text_problem(value)
            if problem:
                errors.append(
                    error_item(
                        ("query", key), "string_unstorable", f"Parameter {problem}"
                    )
                )
        if len(key_values) > 1:
            errors.append(
                error_item(
                    ("query", key),
                    "repeated_parameter",
                    "Parameter given more than once",
                )
            )
        if key not in model.model_fields:
            errors.append(
                error_item(("query", key), "extra_forbidden", "Unknown parameter")
            )
        values[key] = key_values[-1]
    if errors:
        raise RequestValidationError(errors)
    try:
        return validate_input(model, values, where="query")
    except RequestValidationError as invalid:
        if invalid_status == 400:
            raise BadRequest(details={"errors": invalid.errors}) from None
        raise


def parse_path(model: type[Model], **parameters: str) -> Model:
    """The path parameters validated by ``model``."""
    errors = [
        error_item(("path", name), "string_unstorable", f"Parameter {problem}")
        for name, value in parameters.items()
        if (problem := text_problem(value))
    ]
    if errors:
        raise RequestValidationError(errors)
    return validate_input(model, parameters, where="path")
