"""Running a tool: its operation, called directly with the arguments.

The ``/mcp`` request was authenticated once, by DRF, as every API request is; a
tool call then does what the operation's HTTP method does, without an HTTP
request of its own: the arguments are split as the operation takes them - path
parameters, query parameters, the rest as the body - and each part is validated
by the operation's own model; the call counts against the caller's write or read
limit as the operation does over HTTP; then the grant (``Access``), the call and
the rendering are ``powercontext.api.operations``'s. The result is rendered once:
``structuredContent`` is the answer's body and ``content`` the same JSON as text;
a refusal is an ``isError`` result whose ``structuredContent`` is the error
envelope the HTTP operation would answer, and whose text names its status.

Path and query arguments must already have their schema's JSON type: over HTTP
the operation parses text, and ``"3"`` would be an integer the caller never sent.
Nothing is coerced; they are then given to the models as the text a URL would
carry, so they meet exactly the HTTP operation's validation.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

import mcp_types as types
from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from rest_framework.exceptions import Throttled
from rest_framework.request import Request

from powercontext.api.cursors import Walk
from powercontext.api.errors import as_domain_error, error_body, error_text
from powercontext.api.middleware import request_id_of
from powercontext.api.operations import GRANTS, perform
from powercontext.api.parsers import lenient_json_may_hold_a_problem
from powercontext.api.permissions import principal_of
from powercontext.api.ratelimit import principal_limit
from powercontext.api.requests import parse_path, parse_query_values
from powercontext.api.responses import dumps
from powercontext.exceptions import DomainError, NotFound, RequestValidationError
from powercontext.inputs import (
    ErrorItem,
    check_json_value,
    error_item,
    validate_input,
    validation_errors,
)
from powercontext.operations import Context, Given, Operation, Streamed, Text

from .catalogue import Tool
from .protocol import Rendered


class UnknownTool(NotFound):
    code = "not_found"
    message = "No tool of this name; tools/list names every tool."


def tool_call(
    request: Request, tools: dict[str, Tool], name: str, arguments: dict[str, Any]
) -> types.CallToolResult | Rendered:
    """The result of calling tool ``name`` with ``arguments`` as ``request``'s
    (authenticated) caller."""
    tool = tools.get(name)
    try:
        if tool is None:
            raise UnknownTool(details={"tool": name})
        result, walk = _perform(request, tool, arguments)
        return _answer(tool.operation, result, walk)
    # Every failure is the operation's error answer, as DRF's exception handler
    # makes it over HTTP (an unexpected one is logged there and is a 500).
    except Exception as failure:
        return _refusal(name, as_domain_error(failure))


def _perform(
    request: Request, tool: Tool, arguments: dict[str, Any]
) -> tuple[Any, Walk | None]:
    """Validate ``arguments`` as the operation's inputs, count the call, perform it."""
    operation = tool.operation
    path = {k: v for k, v in arguments.items() if k in tool.path_fields}
    query = {k: v for k, v in arguments.items() if k in tool.query_fields}
    body = {
        k: v
        for k, v in arguments.items()
        if k not in tool.path_fields and k not in tool.query_fields
    }
    _check_json_types(operation.path, path, operation.query, query)
    path_input = None
    if operation.path is not None:
        path = _as_path_text(operation.path, path)
        # Missing arguments first: a call without one names no resource at all.
        validate_input(operation.path, path, where="path")
        path_input = parse_path(operation.path, **path)
    if operation.body is None and body:
        raise RequestValidationError(
            [
                error_item(("arguments", k), "extra_forbidden", "Unknown argument")
                for k in sorted(body)
            ]
        )
    principal = principal_of(request)
    decision = principal_limit(principal.name, write=not operation.reads)
    if not decision.allowed:
        raise Throttled(wait=decision.retry_after)
    given = Given(
        path=path_input,
        query=None if operation.query is None else _query_input(operation, query),
        body=(
            None
            if operation.body is None
            else _body_input(
                operation.body, body, lenient_json_may_hold_a_problem(request.body)
            )
        ),
    )
    context = Context(principal, request_id_of(request), GRANTS)
    return perform(operation, given, context)


def _query_input(operation: Operation, query: dict[str, Any]) -> Any:
    assert operation.query is not None
    text = {k: _query_value(v) for k, v in query.items() if v is not None}
    return parse_query_values(
        operation.query, text, invalid_status=operation.query_invalid_status
    )


def _body_input(model: type[BaseModel], body: dict[str, Any], suspect: bool) -> Any:
    """``body`` validated as a JSON body is: storable values (walked only when
    the message's bytes hint at a problem, as for a REST body), then the model."""
    try:
        if suspect:
            check_json_value(body, ("body",))
    except RequestValidationError:
        if _holds_non_finite(body):  # text JSON has no such number: not JSON
            raise RequestValidationError.single(
                ["body"], "json_invalid", "The request body is not valid JSON."
            ) from None
        raise
    return validate_input(model, body, where="body")  # type: ignore[type-var]


def _holds_non_finite(value: Any) -> bool:
    pending = [value]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
        elif isinstance(node, float) and not math.isfinite(node):
            return True
    return False


def _check_json_types(
    path_model: type[BaseModel] | None,
    path: dict[str, Any],
    query_model: type[BaseModel] | None,
    query: dict[str, Any],
) -> None:
    """Refuse a path or query argument of another JSON type than its schema's.

    Over HTTP these values arrive as text and the operation's models parse it;
    a tool gets JSON, where ``"3"`` is a string, not the integer ``limit``
    takes. Nothing is coerced: each argument must already have the JSON type of
    its ``inputSchema`` (``null`` only where the schema allows it), as a body
    field must; a wrong type is the ``422`` a body's wrong type is.
    """
    errors: list[ErrorItem] = []
    for where, model, given in (
        ("path", path_model, path),
        ("query", query_model, query),
    ):
        if model is None or not given:
            continue
        try:
            _json_types_model(model).model_validate(given)
        except ValidationError as exc:
            errors += validation_errors(exc, where=where)
    if errors:
        raise RequestValidationError(errors)


_JSON_TYPES: dict[str, type] = {"integer": int, "boolean": bool, "string": str}


@functools.cache
def _json_types_model(model: type[BaseModel]) -> type[BaseModel]:
    """A strict model of ``model``'s fields with only their JSON types (every
    field optional: presence and values are the operation's own checks)."""
    fields: dict[str, Any] = {}
    for name, schema in model.model_json_schema()["properties"].items():
        variants = schema.get("anyOf", [schema])
        types = {variant.get("type") for variant in variants}
        nullable = "null" in types
        types.discard("null")
        if len(types) != 1 or (kind := types.pop()) not in _JSON_TYPES:
            fields[name] = (Any, None)
            continue
        python_type = _JSON_TYPES[kind]
        fields[name] = (python_type | None if nullable else python_type, None)
    return create_model(
        f"{model.__name__}JsonTypes",
        __config__=ConfigDict(strict=True, extra="ignore"),
        **fields,
    )


def _as_path_text(model: type[BaseModel], path: dict[str, Any]) -> dict[str, Any]:
    """Integer path arguments as the URL would carry them (``7`` as ``"7"``); every
    other argument as given, so a wrong JSON type is still refused."""
    integers = _integer_fields(model)
    return {
        k: str(v) if k in integers and type(v) is int else v for k, v in path.items()
    }


@functools.cache
def _integer_fields(model: type[BaseModel]) -> frozenset[str]:
    properties = model.model_json_schema()["properties"]
    return frozenset(k for k, p in properties.items() if p.get("type") == "integer")


def _query_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


# --- Results --------------------------------------------------------------------------


def _answer(
    operation: Operation, result: Any, walk: Walk | None
) -> types.CallToolResult | Rendered:
    """The tool result of ``result``: the HTTP answer's body, rendered once."""
    if walk is not None:
        assert operation.listing is not None, "a walk belongs to a listing"
        return _json_result(
            walk.body(result, operation.render, operation.listing.items)
        )
    body = operation.render(result)
    if isinstance(body, Streamed):
        items = [body.render(item) for item in body.items]
        return _json_result({"items": items, **body.tail()})
    if isinstance(body, Text):
        return types.CallToolResult(
            content=[types.TextContent(text=body.text)] if body.text else []
        )
    if body is None:
        return types.CallToolResult(content=[])
    return _json_result(body)


def _json_result(body: Any) -> Rendered:
    """``content`` is the answer's JSON text; ``structuredContent`` the same JSON,
    spliced in as it is (``RawJSON`` parts as their HTTP answer carries them).

    The result's other members are the SDK's ``CallToolResult``'s, as its model
    dumps them (``_result_frame``): the body is rendered once, not decoded back
    into a model and encoded again.
    """
    text = dumps(body)
    head, middle, tail = _result_frame()
    return Rendered(f"{head}{json.dumps(text)}{middle}{text}{tail}")


_TEXT_MARK = "\x00text"
_VALUE_MARK = "\x00value"


@functools.cache
def _result_frame() -> tuple[str, str, str]:
    """The JSON text of a ``CallToolResult`` with one text content and a structured
    content, as the SDK's model dumps it, cut around the two: made once per
    process from the model itself, so a member the SDK adds is kept."""
    model = types.CallToolResult(
        content=[types.TextContent(text=_TEXT_MARK)],
        structured_content={_VALUE_MARK: 0},
    )
    framed = json.dumps(
        model.model_dump(by_alias=True, mode="json", exclude_none=True),
        separators=(",", ":"),
    )
    head, rest = framed.split(json.dumps(_TEXT_MARK))
    middle, tail = rest.split(json.dumps({_VALUE_MARK: 0}, separators=(",", ":")))
    return head, middle, tail


def _refusal(name: str, error: DomainError) -> types.CallToolResult:
    body = error_body(error)
    return types.CallToolResult(
        content=[
            types.TextContent(
                text=f"Error calling tool '{name}': "
                f"HTTP error {error.status_code}: {error_text(body)}"
            )
        ],
        structured_content=body,
        is_error=True,
    )
