"""Running a tool: its operation's view, called in-process with the arguments.

The arguments are split as the HTTP operation takes them - path parameters,
query parameters, the rest as the JSON body - into a request that carries the
caller's own ``Authorization`` (and address, host and trace headers). The view
then does what it does over HTTP: authentication, the rate limit of a read or
a write, the strict model, ``authorize`` on the scope, the service, the one
error renderer. Its answer becomes the tool's result: ``structuredContent`` is
the answer's body and ``content`` the same JSON as text; a 4xx/5xx answer is an
``isError`` result whose ``structuredContent`` is the error envelope.

Path and query arguments must already have their schema's JSON type before they
become URL text: over HTTP the view parses text, and ``"3"`` turned into the
text ``3`` would be an integer the caller never sent. Nothing is coerced.
"""

from __future__ import annotations

import functools
import io
import json
from typing import Any
from urllib.parse import urlencode

import mcp_types as types
from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpRequest, HttpResponseBase, StreamingHttpResponse
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from powercontext.api.errors import error_response
from powercontext.api.middleware import request_id_of
from powercontext.exceptions import DomainError, NotFound, RequestValidationError
from powercontext.inputs import (
    ErrorItem,
    error_item,
    validate_input,
    validation_errors,
)
from powercontext.jsonvalues import stored_json_loads

from .catalogue import Tool

# Headers of the POST to /mcp that must not reach the operation: its own
# conditions and content negotiation are not the tool call's.
_DROPPED_HEADERS = ("HTTP_IF_", "HTTP_ACCEPT", "HTTP_MCP_", "HTTP_CONTENT_")


class UnknownTool(NotFound):
    code = "not_found"
    message = "No tool of this name; tools/list names every tool."


def tool_call(
    outer: HttpRequest, tools: dict[str, Tool], name: str, arguments: dict[str, Any]
) -> types.CallToolResult:
    """The result of calling tool ``name`` with ``arguments`` as ``outer``'s caller."""
    tool = tools.get(name)
    try:
        if tool is None:
            raise UnknownTool(details={"tool": name})
        request, path = _operation_request(outer, tool, arguments)
    except DomainError as refused:
        return _result(name, error_response(refused))
    return _result(name, tool.handler(request, **path))


def _operation_request(
    outer: HttpRequest, tool: Tool, arguments: dict[str, Any]
) -> tuple[WSGIRequest, dict[str, Any]]:
    """The HTTP request of ``tool``'s operation, and its path parameters."""
    operation = tool.operation
    path = {k: v for k, v in arguments.items() if k in tool.path_fields}
    query = {k: v for k, v in arguments.items() if k in tool.query_fields}
    _check_json_types(operation.path, path, operation.query, query)
    if operation.path is not None:
        path = _as_path_text(operation.path, path)
        # The view validates them again; missing ones must fail here, as a call
        # with a missing keyword is no request at all.
        validate_input(operation.path, path, where="path")
    query = {k: _query_value(v) for k, v in query.items() if v is not None}
    body = {
        k: v
        for k, v in arguments.items()
        if k not in tool.path_fields and k not in tool.query_fields
    }
    if operation.body is None and body:
        raise RequestValidationError(
            [
                error_item(("arguments", k), "extra_forbidden", "Unknown argument")
                for k in sorted(body)
            ]
        )
    # ASCII escapes: a lone surrogate reaches the body parser, which refuses it.
    payload = b"" if operation.body is None else json.dumps(body).encode()
    environ = {
        key: value
        for key, value in outer.META.items()
        if not key.startswith(_DROPPED_HEADERS)
    }
    environ.update(
        {
            "REQUEST_METHOD": tool.http_method,
            "QUERY_STRING": urlencode(query),
            "CONTENT_TYPE": "application/json" if payload else "",
            "CONTENT_LENGTH": str(len(payload)),
            "wsgi.input": io.BytesIO(payload),
        }
    )
    request = WSGIRequest(environ)
    request.request_id = request_id_of(outer)  # type: ignore[attr-defined]
    return request, path


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


def _result(name: str, response: HttpResponseBase) -> types.CallToolResult:
    body = _body_of(response)
    text = body.decode()
    if response.status_code >= 400:
        return types.CallToolResult(
            content=[
                types.TextContent(
                    text=f"Error calling tool '{name}': "
                    f"HTTP error {response.status_code}: {text}"
                )
            ],
            structured_content=json.loads(text),
            is_error=True,
        )
    if response.get("Content-Type", "").startswith("application/json"):
        return types.CallToolResult(
            content=[types.TextContent(text=text)],
            structured_content=stored_json_loads(text),
        )
    return types.CallToolResult(content=[types.TextContent(text=text)] if text else [])


def _body_of(response: HttpResponseBase) -> bytes:
    if isinstance(response, StreamingHttpResponse):
        return b"".join(response.streaming_content)  # type: ignore[arg-type]
    render = getattr(response, "render", None)
    if render is not None:
        render()
    content: bytes = response.content  # type: ignore[attr-defined]
    return content
