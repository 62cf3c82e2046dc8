"""Operations over HTTP: the DRF views and URL patterns derived from declarations.

An app lists its ``Operation`` declarations (``powercontext.operations``) in its
``operations.py``; its ``urls.py`` calls ``routes(...)``, which makes one DRF view
per route - a method per operation on it, decorated with the operation's OpenAPI
entry (``openapi.documented``) - in the order the URL conf names them.

Every method runs the same steps, in the order of api.md 1 (authentication and
the rate limit already ran in DRF's ``initial``): the path, the query, the body,
each validated by its strict model (422, or 400 for the queries that answer 400);
the grant (``Access``: 403); the list cursor; the call; the rendering. MCP runs
the same ``perform`` and renders the same result (``powercontext.mcp_server``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from django.http import HttpResponse, HttpResponseBase, HttpResponseNotModified
from django.urls import URLPattern, path, re_path
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from powercontext.db.replica import reads_from_replica
from powercontext.operations import Context, Given, Operation, Streamed, Text
from powercontext.principals import Principal, Role

from .cursors import Walk
from .middleware import request_id_of
from .openapi import documented
from .permissions import authorize, authorize_everywhere, current, principal_of
from .requests import parse_body, parse_path, parse_query
from .responses import StreamedJSONResponse


class ApiGrants:
    """The grant checks of ``permissions``, as ``Context.grants``."""

    def authorize(self, principal: Principal, scope_id: str, role: Role) -> None:
        authorize(principal, scope_id, role)

    def authorize_everywhere(self, principal: Principal, role: Role) -> None:
        authorize_everywhere(principal, role)

    def current(self, principal: Principal) -> Principal:
        return current(principal)


GRANTS = ApiGrants()


def perform(
    operation: Operation, given: Given, context: Context
) -> tuple[Any, Walk | None]:
    """Authorize ``operation`` as its ``Access`` says, read the list cursor, call.

    Returns the call's result and, for a listing, its walk (to render cursors).
    """
    access = operation.access
    if access.scope_from is not None:
        named = given.path if access.scope_from == "path" else given.body
        assert access.role is not None, "a scoped access names its role"
        context.authorize(named.scope_id, access.role)
    elif access.needs == "everywhere" and not access.checked_by_call:
        assert access.role is not None, "an everywhere access names its role"
        context.authorize_everywhere(access.role)
    listing = operation.listing
    if listing is None:
        return operation.call(given, context), None
    walk = Walk.of(listing.kind, *listing.bound_to(given))
    cursor = getattr(given.query, listing.cursor)
    context = replace(context, position=walk.position(cursor))
    return operation.call(given, context), walk


def respond(operation: Operation, result: Any, walk: Walk | None) -> HttpResponseBase:
    """The HTTP answer of ``result``: body, status and headers as declared."""
    if walk is not None:
        if operation.listing is not None and operation.listing.stream:
            return walk.stream(result, operation.render)
        return Response(walk.body(result, operation.render))
    status = operation.status_of(result)
    headers = operation.headers(result)
    body = operation.render(result)
    response: HttpResponseBase
    if isinstance(body, Streamed):
        response = StreamedJSONResponse(
            body.items, body.render, body.tail, status=status
        )
    elif isinstance(body, Text):
        response = HttpResponse(
            body.text, status=status, content_type="text/plain; charset=utf-8"
        )
    elif body is None and status == 304:
        response = HttpResponseNotModified()
    elif body is None and status == 204:
        response = HttpResponse(status=204)
        del response["Content-Type"]
    else:
        return Response(body, status=status, headers=headers or None)
    for name, value in headers.items():
        response[name] = value
    return response


def _http_method(operation: Operation) -> Callable[..., HttpResponseBase]:
    """The view method that serves ``operation``."""
    path_model, query_model, body_model = (
        operation.path,
        operation.query,
        operation.body,
    )
    path_from = operation.path_from

    def serve(self: APIView, request: Request, **captured: str) -> HttpResponseBase:
        if path_from is not None:
            captured = path_from(captured)
        given = Given(
            path=None if path_model is None else parse_path(path_model, **captured),
            query=None
            if query_model is None
            else parse_query(
                query_model,
                request.query_params,
                invalid_status=operation.query_invalid_status,
            ),
            body=None if body_model is None else parse_body(body_model, request),
        )
        meta = request.META
        context = Context(
            principal_of(request),
            request_id_of(request),
            GRANTS,
            if_match=meta.get("HTTP_IF_MATCH"),
            if_none_match=meta.get("HTTP_IF_NONE_MATCH"),
        )
        result, walk = perform(operation, given, context)
        return respond(operation, result, walk)

    serve.__name__ = serve.__qualname__ = operation.method.lower()
    method: Callable[..., HttpResponseBase] = serve
    if operation.replica:
        method = reads_from_replica(method)
    if operation.documented:
        return documented(
            operation.operation_id,
            tags=list(operation.tags),
            path=operation.path,
            query=operation.query,
            body=operation.body,
            answers=dict(operation.answers),
            errors=operation.errors,
            headers=operation.documented_headers,
            description=operation.description,
        )(method)
    return extend_schema(exclude=True)(method)


def view_for(operations: Sequence[Operation]) -> type[APIView]:
    """One DRF view for the operations of one route, a method each."""
    route = operations[0].route
    methods = {op.method.lower(): _http_method(op) for op in operations}
    assert len(methods) == len(operations), f"{route.name}: a method twice"
    name = "".join(part.title() for part in route.name.split("-")) + "View"
    declared = {op.method.lower(): op for op in operations}
    # ``operations``: what the view serves, for readers of the URL conf (the
    # authorization matrix reads each method's ``Access`` from it).
    view = type(name, (APIView,), {**methods, "operations": declared})
    view.__module__ = __name__
    return view


def routes(operations: Sequence[Operation], *names: str) -> list[URLPattern]:
    """URL patterns for the routes ``names`` (all, in declaration order, if none)."""
    by_route: dict[str, list[Operation]] = {}
    for operation in operations:
        by_route.setdefault(operation.route.name, []).append(operation)
    patterns = []
    for name in names or tuple(by_route):
        declared = by_route[name]
        route = declared[0].route
        assert all(op.route == route for op in declared), f"{name}: two patterns"
        make = re_path if route.regex else path
        patterns.append(make(route.pattern, view_for(declared).as_view(), name=name))
    return patterns
