"""Registry views, in order: scopes, capture, Source reads, audit and attempts; last,
the legacy Memory routes (``sources.memory``), which validate, authorize and refuse.
Each parses, authorizes and calls a service or selector."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpResponseBase
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from powercontext.api.cursors import Walk
from powercontext.api.middleware import request_id_of
from powercontext.api.openapi import documented
from powercontext.api.permissions import (
    authorize,
    authorize_everywhere,
    current,
    principal_of,
)
from powercontext.api.requests import parse_body, parse_path, parse_query
from powercontext.api.responses import StreamedJSONResponse
from powercontext.api.schema import ErrorResponseSerializer
from powercontext.db.replica import reads_from_replica
from powercontext.inputs import StrictInput
from powercontext.principals import Role

from . import inputs, memory, schemas, selectors, services
from .inputs import (
    CaptureContent,
    CaptureWorkingNote,
    CreateSource,
    PageQuery,
    ScopeCreate,
    ScopeListQuery,
    ScopePath,
    SourceAuditQuery,
    SourcePath,
    SourceWindowQuery,
)
from .renderers import (
    attempt_item,
    audit_record,
    receipt_body,
    scope_descriptor,
    search_item,
    source_record,
)

SCOPES, SOURCES, AUDIT = ["scopes"], ["sources"], ["audit"]


class ScopeCollectionView(APIView):
    @documented(
        "list_scopes",
        tags=SCOPES,
        query=ScopeListQuery,
        answers={200: schemas.ScopePage},
        errors=(400, 410),
    )
    @reads_from_replica
    def get(self, request: Request) -> Response:
        query = parse_query(ScopeListQuery, request.query_params)
        walk = Walk.of("scopes", query.filters())
        page = selectors.scope_list(
            principal=current(principal_of(request)),
            position=walk.position(query.cursor),
            limit=query.limit,
            **query.filters(),
        )
        return Response(walk.body(page, scope_descriptor))

    @documented(
        "create_scope",
        tags=SCOPES,
        body=ScopeCreate,
        answers={201: schemas.ScopeDescriptor},
        errors=(404, 409),
    )
    def post(self, request: Request) -> Response:
        data = parse_body(ScopeCreate, request)
        authorize_everywhere(principal_of(request), Role.CONTRIBUTOR)
        scope, _ = services.scope_create(
            principal=principal_of(request),
            request_id=request_id_of(request),
            **{**dict(data), "external_references": data.reference_pairs()},
        )
        return Response(scope_descriptor(scope), status=201)


class DefaultScopeView(APIView):
    @documented(
        "get_default_scope",
        tags=SCOPES,
        answers={200: schemas.ScopeDescriptor},
        errors=(),
    )
    def get(self, request: Request) -> Response:
        principal = principal_of(request)
        scope_id = selectors.default_scope_id(principal=principal)
        if scope_id is None:  # the first call creates it, as a new scope
            authorize_everywhere(principal, Role.CONTRIBUTOR)
            scope = services.default_scope_create(
                principal=principal, request_id=request_id_of(request)
            )
        else:
            authorize(principal, scope_id, Role.VIEWER)
            scope = selectors.scope_get(scope_id=scope_id)
        return Response(scope_descriptor(scope))


class ScopeDetailView(APIView):
    @documented(
        "get_scope",
        tags=SCOPES,
        path=ScopePath,
        answers={200: schemas.ScopeDescriptor},
        errors=(404,),
    )
    def get(self, request: Request, scope_id: str) -> Response:
        parse_path(ScopePath, scope_id=scope_id)
        authorize(principal_of(request), scope_id, Role.VIEWER)
        return Response(scope_descriptor(selectors.scope_get(scope_id=scope_id)))


def _receipt_response(receipt: services.Receipt) -> Response:
    headers = {"Idempotent-Replayed": "true"} if receipt.replayed else None
    return Response(receipt_body(receipt), status=202, headers=headers)


class CaptureContentView(APIView):
    @documented(
        "capture_content_source",
        tags=SOURCES,
        body=CaptureContent,
        answers={202: schemas.CaptureReceipt},
        errors=(404, 409),
    )
    def post(self, request: Request) -> Response:
        data = parse_body(CaptureContent, request)
        authorize(principal_of(request), data.scope_id, Role.CONTRIBUTOR)
        receipt = services.source_capture(
            principal=principal_of(request),
            request_id=request_id_of(request),
            **dict(data),
        )
        return _receipt_response(receipt)


class CaptureWorkingNoteView(APIView):
    @documented(
        "capture_working_note",
        tags=SOURCES,
        body=CaptureWorkingNote,
        answers={202: schemas.CaptureReceipt},
        errors=(404, 409),
    )
    def post(self, request: Request) -> Response:
        data = parse_body(CaptureWorkingNote, request)
        authorize(principal_of(request), data.scope_id, Role.CONTRIBUTOR)
        receipt = services.working_note_capture(
            principal=principal_of(request),
            request_id=request_id_of(request),
            **dict(data),
        )
        return _receipt_response(receipt)


class SourceCollectionView(APIView):
    @documented(
        "list_sources",
        tags=SOURCES,
        path=ScopePath,
        query=PageQuery,
        answers={200: schemas.SourcePage},
        errors=(400, 404, 410),
    )
    @reads_from_replica
    def get(self, request: Request, scope_id: str) -> HttpResponseBase:
        parse_path(ScopePath, scope_id=scope_id)
        query = parse_query(PageQuery, request.query_params, invalid_status=400)
        authorize(principal_of(request), scope_id, Role.VIEWER)
        walk = Walk.of("sources", scope_id)
        page = selectors.source_page(
            scope_id=scope_id, position=walk.position(query.cursor), limit=query.limit
        )
        return walk.stream(page, source_record)

    @documented(
        "create_source",
        tags=SOURCES,
        path=ScopePath,
        body=CreateSource,
        answers={201: schemas.SourceRecord},
        errors=(404,),
    )
    def post(self, request: Request, scope_id: str) -> Response:
        parse_path(ScopePath, scope_id=scope_id)
        data = parse_body(CreateSource, request)
        authorize(principal_of(request), scope_id, Role.CONTRIBUTOR)
        created = services.source_create(
            principal=principal_of(request),
            scope_id=scope_id,
            content=data.content,
            request_id=request_id_of(request),
        )
        location = reverse(
            "source-detail", args=[scope_id, created.source_type, created.source_id]
        )
        return Response(
            source_record(created), status=201, headers={"Location": location}
        )


class SourceDetailView(APIView):
    @documented(
        "get_source",
        tags=SOURCES,
        path=SourcePath,
        answers={200: schemas.SourceRecord},
        errors=(404,),
    )
    def get(
        self, request: Request, scope_id: str, source_type: str, source_id: str
    ) -> Response:
        path = parse_path(SourcePath, **self.kwargs)
        authorize(principal_of(request), scope_id, Role.VIEWER)
        return Response(source_record(selectors.source_get(**dict(path))))


class SourceWindowView(APIView):
    @documented(
        "read_generation_window",
        tags=SOURCES,
        path=ScopePath,
        query=SourceWindowQuery,
        answers={200: schemas.SourceWindow},
        errors=(400, 404),
    )
    @reads_from_replica
    def get(self, request: Request, scope_id: str) -> HttpResponseBase:
        parse_path(ScopePath, scope_id=scope_id)
        query = parse_query(SourceWindowQuery, request.query_params, invalid_status=400)
        authorize(principal_of(request), scope_id, Role.VIEWER)
        window = selectors.source_window(
            scope_id=scope_id, after=query.after, limit=query.limit
        )
        tail = {
            "next_after": window.next_after,
            "high_watermark": window.high_watermark,
        }
        return StreamedJSONResponse(window.items, source_record, lambda: tail)


class SourceAuditCollectionView(APIView):
    @documented(
        "list_source_audit",
        tags=AUDIT,
        path=ScopePath,
        query=SourceAuditQuery,
        answers={200: schemas.AuditPage},
        errors=(400, 404, 410),
    )
    @reads_from_replica
    def get(self, request: Request, scope_id: str) -> HttpResponseBase:
        parse_path(ScopePath, scope_id=scope_id)
        query = parse_query(SourceAuditQuery, request.query_params, invalid_status=400)
        authorize(principal_of(request), scope_id, Role.VIEWER)
        filters = query.filters()
        walk, now = Walk.of("source-audit", scope_id, filters.as_dict()), timezone.now()
        page = selectors.audit_page(
            scope_id=scope_id,
            filters=filters,
            position=walk.position(query.cursor),
            start_after=query.after_position,
            limit=query.limit,
            now=now,
        )
        return walk.stream(page, lambda row: audit_record(row, now))


class SourceAuditDetailView(APIView):
    @documented(
        "get_source_audit",
        tags=AUDIT,
        path=SourcePath,
        answers={200: schemas.AuditRecord},
        errors=(404,),
    )
    @reads_from_replica
    def get(
        self, request: Request, scope_id: str, source_type: str, source_id: str
    ) -> Response:
        path = parse_path(SourcePath, **self.kwargs)
        authorize(principal_of(request), scope_id, Role.VIEWER)
        row = selectors.audit_get(**dict(path))
        return Response(audit_record(row, timezone.now()))


class SourceAttemptsView(APIView):
    @documented(
        "list_capture_attempts",
        tags=AUDIT,
        path=SourcePath,
        query=PageQuery,
        answers={200: schemas.AttemptPage},
        errors=(400, 404, 410),
    )
    @reads_from_replica
    def get(
        self, request: Request, scope_id: str, source_type: str, source_id: str
    ) -> Response:
        path = parse_path(SourcePath, **self.kwargs)
        query = parse_query(PageQuery, request.query_params, invalid_status=400)
        authorize(principal_of(request), scope_id, Role.VIEWER)
        walk = Walk.of("attempts", scope_id, source_type, source_id)
        page = selectors.attempt_page(
            **dict(path), position=walk.position(query.cursor), limit=query.limit
        )
        return Response(walk.body(page, attempt_item))


class SourceSearchView(APIView):
    @documented(
        "search_sources",
        tags=AUDIT,
        path=ScopePath,
        query=inputs.SearchQueryParameters,
        answers={200: schemas.SearchPage},
        errors=(400, 404, 410),
    )
    def get(self, request: Request, scope_id: str) -> Response:
        parse_path(ScopePath, scope_id=scope_id)
        query = parse_query(inputs.SearchQueryParameters, request.query_params)
        search = query.search_query()
        authorize(principal_of(request), scope_id, Role.VIEWER)
        walk = Walk.of(
            "search", scope_id, search.match, search.text, query.filters().as_dict()
        )
        page = selectors.source_search(
            scope_id=scope_id,
            query=search,
            filters=query.filters(),
            position=walk.position(query.cursor),
            limit=query.limit,
            now=timezone.now(),
        )
        return Response(walk.body(page, search_item))


# The legacy Memory routes.
#
# Each route validates its body with the reference's request model (so a malformed
# request gets the reference's error items), then refuses it. Routes whose refusal
# the reference gives without looking at the scope need only a valid token; the
# others are authorized on the scope they name, as every scoped operation is.

MEMORY = ["memory"]
REFUSED = OpenApiResponse(
    ErrorResponseSerializer,
    description=(
        "Always, after the checks above: `legacy_memory_operation_unsupported` for "
        "the operations the reference refuses, `operation_not_supported` for the "
        "Memory features this service does not have."
    ),
)

# How an operation's valid request is refused: (legacy refusal or None, whether the
# scope is looked up first).
Refusal = Callable[[Any], tuple[memory.LegacyOperation | None, bool]]


def _memory_view(
    operation_id: str, model: type[StrictInput], role: Role | None, refusal: Refusal
) -> type[APIView]:
    class MemoryView(APIView):
        @documented(
            operation_id,
            tags=MEMORY,
            body=model,
            answers={422: REFUSED},
            errors=(404,) if role is not None else (),
        )
        def post(self, request: Request) -> None:
            data = parse_body(model, request)
            legacy, scoped = refusal(data)
            if role is not None:
                authorize(principal_of(request), data.scope_id, role)  # type: ignore[attr-defined]
            memory.memory_operation_refuse(
                operation=operation_id,
                scope_id=data.scope_id if scoped else None,  # type: ignore[attr-defined]
                legacy=legacy,
            )

    MemoryView.__name__ = MemoryView.__qualname__ = (
        "".join(part.title() for part in operation_id.split("_")) + "View"
    )
    return MemoryView


def _always(legacy: memory.LegacyOperation) -> Refusal:
    return lambda data: (legacy, False)


def _unsupported(data: Any) -> tuple[None, bool]:
    return None, True


def _remember(
    data: inputs.RememberMemory,
) -> tuple[memory.LegacyOperation | None, bool]:
    legacy = None if data.expected_revision is None else memory.REVISION_PRECONDITION
    return legacy, True


def _entry_get(
    data: inputs.GetMemoryEntry,
) -> tuple[memory.LegacyOperation | None, bool]:
    return (memory.CITATION_READ if data.citation is not None else None), True


# (route, operation id, model, role on the named scope or None, refusal)
MEMORY_ROUTES: list[tuple[str, str, type[StrictInput], Role | None, Refusal]] = [
    ("remember", "remember_memory", inputs.RememberMemory, Role.CONTRIBUTOR, _remember),
    ("search", "search_memory", inputs.SearchMemory, Role.VIEWER, _unsupported),
    ("flush", "flush_memory", inputs.MemoryScope, Role.CONTRIBUTOR, _unsupported),
    (
        "capacity",
        "get_memory_capacity",
        inputs.MemoryScope,
        None,
        _always(memory.CAPACITY),
    ),
    (
        "entries/list",
        "list_memory_entries",
        inputs.ListMemoryEntries,
        Role.VIEWER,
        _unsupported,
    ),
    ("entries/get", "get_memory_entry", inputs.GetMemoryEntry, Role.VIEWER, _entry_get),
    (
        "entries/revise",
        "revise_memory_entry",
        inputs.ReviseMemoryEntry,
        None,
        _always(memory.CITATION_REVISE),
    ),
    (
        "entries/retire",
        "retire_memory_entry",
        inputs.RetireMemoryEntry,
        None,
        _always(memory.CITATION_RETIRE),
    ),
    (
        "changes",
        "list_memory_changes",
        inputs.ListMemoryChanges,
        None,
        _always(memory.CHANGES),
    ),
]
# (path under /v1/memory/, route name suffix, view)
MEMORY_ROUTE_VIEWS = [
    (route, route.replace("/", "-"), _memory_view(operation_id, model, role, refusal))
    for route, operation_id, model, role, refusal in MEMORY_ROUTES
]
