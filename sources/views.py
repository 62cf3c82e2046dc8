"""Registry views: parse, authorize, call one service or selector, render."""

from __future__ import annotations

from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from powercontext.api.cursors import cursor_binding, cursor_decode, next_page
from powercontext.api.exceptions import RequestValidationError
from powercontext.api.middleware import request_id_of
from powercontext.api.models import Role
from powercontext.api.permissions import authorize, authorize_everywhere, principal_of
from powercontext.api.schema import error_responses
from powercontext.api.validation import validate_body, validate_path, validate_query

from . import selectors, services
from .serializers import (
    AttemptPageSerializer,
    AuditPageSerializer,
    AuditRecordSerializer,
    CaptureContentInput,
    CaptureReceiptSerializer,
    CaptureWorkingNoteInput,
    CreateSourceInput,
    PageQuery,
    ScopeCreateInput,
    ScopeDescriptorSerializer,
    ScopeListQuery,
    ScopePageSerializer,
    SourceAuditQuery,
    SourcePageSerializer,
    SourceRecordSerializer,
    SourceWindowQuery,
    SourceWindowSerializer,
    attempt_item,
    audit_record,
    receipt_body,
    scope_descriptor,
    source_record,
)

SCOPE_ID_PATH = OpenApiParameter("scope_id", str, OpenApiParameter.PATH)


class ScopeCollectionView(APIView):
    @extend_schema(
        operation_id="list_scopes",
        parameters=[ScopeListQuery],
        responses={200: ScopePageSerializer, **error_responses(400, 410)},
        tags=["scopes"],
    )
    def get(self, request: Request) -> Response:
        query = validate_query(ScopeListQuery, request.query_params)
        filters = {
            key: query.get(key)
            for key in (
                "query",
                "query_field",
                "parent_scope_id",
                "external_reference_kind",
            )
        }
        binding = cursor_binding("scopes", filters)
        after = None
        if "cursor" in query:
            after = cursor_decode(query["cursor"], kind="scopes", binding=binding)[
                "after"
            ]
        rows = selectors.scope_list(
            principal=principal_of(request),
            after_scope_id=after,
            limit=query["limit"],
            **filters,
        )
        page, next_cursor = next_page(
            rows,
            limit=query["limit"],
            kind="scopes",
            binding=binding,
            position_of=lambda scope: {"after": scope.scope_id},
        )
        return Response(
            {"items": [scope_descriptor(s) for s in page], "next_cursor": next_cursor}
        )

    @extend_schema(
        operation_id="create_scope",
        request=ScopeCreateInput,
        responses={201: ScopeDescriptorSerializer, **error_responses(404, 409)},
        tags=["scopes"],
    )
    def post(self, request: Request) -> Response:
        data = validate_body(ScopeCreateInput, request.data)
        authorize_everywhere(principal_of(request), Role.CONTRIBUTOR)
        scope, _ = services.scope_create(
            principal=principal_of(request),
            title=data["title"],
            summary=data["summary"],
            parent_scope_id=data["parent_scope_id"],
            context_references=data["context_references"],
            external_references=[
                services.ExternalReference(**ref) for ref in data["external_references"]
            ],
            idempotency_key=data["idempotency_key"],
            request_id=request_id_of(request),
        )
        return Response(scope_descriptor(scope), status=201)


class ScopeDetailView(APIView):
    @extend_schema(
        operation_id="get_scope",
        parameters=[SCOPE_ID_PATH],
        responses={200: ScopeDescriptorSerializer, **error_responses(404)},
        tags=["scopes"],
    )
    def get(self, request: Request, scope_id: str) -> Response:
        validate_path(scope_id=scope_id)
        authorize(principal_of(request), scope_id, Role.VIEWER)
        return Response(scope_descriptor(selectors.scope_get(scope_id=scope_id)))


# --- Capture ------------------------------------------------------------------


def _receipt_response(receipt: services.Receipt) -> Response:
    headers = {"Idempotent-Replayed": "true"} if receipt.replayed else None
    return Response(receipt_body(receipt), status=202, headers=headers)


class CaptureContentView(APIView):
    @extend_schema(
        operation_id="capture_content_source",
        request=CaptureContentInput,
        responses={202: CaptureReceiptSerializer, **error_responses(404, 409)},
        tags=["sources"],
    )
    def post(self, request: Request) -> Response:
        data = validate_body(CaptureContentInput, request.data)
        principal = principal_of(request)
        authorize(principal, data["scope_id"], Role.CONTRIBUTOR)
        receipt = services.source_capture(
            principal=principal, request_id=request_id_of(request), **data
        )
        return _receipt_response(receipt)


class CaptureWorkingNoteView(APIView):
    @extend_schema(
        operation_id="capture_working_note",
        request=CaptureWorkingNoteInput,
        responses={202: CaptureReceiptSerializer, **error_responses(404, 409)},
        tags=["sources"],
    )
    def post(self, request: Request) -> Response:
        data = validate_body(CaptureWorkingNoteInput, request.data)
        principal = principal_of(request)
        authorize(principal, data["scope_id"], Role.CONTRIBUTOR)
        receipt = services.working_note_capture(
            principal=principal, request_id=request_id_of(request), **data
        )
        return _receipt_response(receipt)


# --- Reads --------------------------------------------------------------------

SOURCE_TYPE_PATH = OpenApiParameter(
    "source_type", str, OpenApiParameter.PATH, enum=["content"]
)
SOURCE_ID_PATH = OpenApiParameter("source_id", str, OpenApiParameter.PATH)


def _validate_source_path(scope_id: str, source_type: str, source_id: str) -> None:
    """Path ids: storable, 1..256, not blank; ``source_type`` is ``content``;
    ``source_id`` carries no leading or trailing whitespace."""
    validate_path(scope_id=scope_id, source_id=source_id)
    errors = []
    if source_type != "content":
        errors.append(
            {
                "type": "enum",
                "loc": ["path", "source_type"],
                "msg": "Input should be 'content'.",
            }
        )
    if source_id != source_id.strip():
        errors.append(
            {
                "type": "padded",
                "loc": ["path", "source_id"],
                "msg": "Must not start or end with whitespace.",
            }
        )
    if errors:
        raise RequestValidationError(errors)


class SourceCollectionView(APIView):
    @extend_schema(
        operation_id="list_sources",
        parameters=[SCOPE_ID_PATH, PageQuery],
        responses={200: SourcePageSerializer, **error_responses(400, 404, 410)},
        tags=["sources"],
    )
    def get(self, request: Request, scope_id: str) -> Response:
        validate_path(scope_id=scope_id)
        query = validate_query(PageQuery, request.query_params, invalid_status=400)
        authorize(principal_of(request), scope_id, Role.VIEWER)
        binding = cursor_binding("sources", scope_id)
        if "cursor" in query:
            position = cursor_decode(query["cursor"], kind="sources", binding=binding)
            after, watermark = position["after"], position["watermark"]
        else:
            after, watermark = 0, selectors.scope_watermark(scope_id=scope_id)
        rows = selectors.source_page(
            scope_id=scope_id,
            after_position=after,
            high_watermark=watermark,
            limit=query["limit"],
        )
        page, next_cursor = next_page(
            rows,
            limit=query["limit"],
            kind="sources",
            binding=binding,
            position_of=lambda row: {"after": row["position"], "watermark": watermark},
        )
        return Response(
            {"items": [source_record(row) for row in page], "next_cursor": next_cursor}
        )

    @extend_schema(
        operation_id="create_source",
        parameters=[SCOPE_ID_PATH],
        request=CreateSourceInput,
        responses={201: SourceRecordSerializer, **error_responses(404)},
        tags=["sources"],
    )
    def post(self, request: Request, scope_id: str) -> Response:
        validate_path(scope_id=scope_id)
        data = validate_body(CreateSourceInput, request.data)
        principal = principal_of(request)
        authorize(principal, scope_id, Role.CONTRIBUTOR)
        created = services.source_create(
            principal=principal,
            scope_id=scope_id,
            content=data["content"],
            request_id=request_id_of(request),
        )
        location = reverse(
            "source-detail",
            kwargs={
                "scope_id": scope_id,
                "source_type": created.source_type,
                "source_id": created.source_id,
            },
        )
        return Response(
            source_record(created), status=201, headers={"Location": location}
        )


class SourceDetailView(APIView):
    @extend_schema(
        operation_id="get_source",
        parameters=[SCOPE_ID_PATH, SOURCE_TYPE_PATH, SOURCE_ID_PATH],
        responses={200: SourceRecordSerializer, **error_responses(404)},
        tags=["sources"],
    )
    def get(
        self, request: Request, scope_id: str, source_type: str, source_id: str
    ) -> Response:
        _validate_source_path(scope_id, source_type, source_id)
        authorize(principal_of(request), scope_id, Role.VIEWER)
        row = selectors.source_get(
            scope_id=scope_id, source_type=source_type, source_id=source_id
        )
        return Response(source_record(row))


class SourceWindowView(APIView):
    @extend_schema(
        operation_id="read_generation_window",
        parameters=[SCOPE_ID_PATH, SourceWindowQuery],
        responses={200: SourceWindowSerializer, **error_responses(400, 404)},
        tags=["sources"],
    )
    def get(self, request: Request, scope_id: str) -> Response:
        validate_path(scope_id=scope_id)
        query = validate_query(
            SourceWindowQuery, request.query_params, invalid_status=400
        )
        authorize(principal_of(request), scope_id, Role.VIEWER)
        watermark = selectors.scope_watermark(scope_id=scope_id)
        rows = selectors.source_window(
            scope_id=scope_id,
            after_position=query["after"],
            high_watermark=watermark,
            limit=query["limit"],
        )
        full_page = len(rows) == query["limit"]
        next_after = (
            rows[-1]["position"] if full_page else max(watermark, query["after"])
        )
        return Response(
            {
                "items": [source_record(row) for row in rows],
                "next_after": next_after,
                "high_watermark": watermark,
            }
        )


# --- Audit --------------------------------------------------------------------


class SourceAuditCollectionView(APIView):
    @extend_schema(
        operation_id="list_source_audit",
        parameters=[SCOPE_ID_PATH, SourceAuditQuery],
        responses={200: AuditPageSerializer, **error_responses(400, 404, 410)},
        tags=["audit"],
    )
    def get(self, request: Request, scope_id: str) -> Response:
        validate_path(scope_id=scope_id)
        query = validate_query(
            SourceAuditQuery, request.query_params, invalid_status=400
        )
        authorize(principal_of(request), scope_id, Role.VIEWER)
        filters = selectors.AuditFilters(
            working_note=query.get("working_note"),
            session_id=query.get("session_id"),
            note_kind=query.get("note_kind"),
            state=query.get("state"),
        )
        binding = cursor_binding("source-audit", scope_id, filters.__dict__)
        after = query["after_position"]
        if "cursor" in query:
            after = cursor_decode(
                query["cursor"], kind="source-audit", binding=binding
            )["after"]
        selectors.scope_require(scope_id=scope_id)
        now = timezone.now()
        rows = selectors.audit_page(
            scope_id=scope_id,
            filters=filters,
            after_position=after,
            limit=query["limit"],
            now=now,
        )
        page, next_cursor = next_page(
            rows,
            limit=query["limit"],
            kind="source-audit",
            binding=binding,
            position_of=lambda row: {"after": row["position"]},
        )
        return Response(
            {
                "items": [audit_record(row, now) for row in page],
                "next_cursor": next_cursor,
            }
        )


class SourceAuditDetailView(APIView):
    @extend_schema(
        operation_id="get_source_audit",
        parameters=[SCOPE_ID_PATH, SOURCE_TYPE_PATH, SOURCE_ID_PATH],
        responses={200: AuditRecordSerializer, **error_responses(404)},
        tags=["audit"],
    )
    def get(
        self, request: Request, scope_id: str, source_type: str, source_id: str
    ) -> Response:
        _validate_source_path(scope_id, source_type, source_id)
        authorize(principal_of(request), scope_id, Role.VIEWER)
        row = selectors.audit_get(
            scope_id=scope_id, source_type=source_type, source_id=source_id
        )
        return Response(audit_record(row, timezone.now()))


class SourceAttemptsView(APIView):
    @extend_schema(
        operation_id="list_capture_attempts",
        parameters=[SCOPE_ID_PATH, SOURCE_TYPE_PATH, SOURCE_ID_PATH, PageQuery],
        responses={200: AttemptPageSerializer, **error_responses(400, 404, 410)},
        tags=["audit"],
    )
    def get(
        self, request: Request, scope_id: str, source_type: str, source_id: str
    ) -> Response:
        _validate_source_path(scope_id, source_type, source_id)
        query = validate_query(PageQuery, request.query_params, invalid_status=400)
        authorize(principal_of(request), scope_id, Role.VIEWER)
        binding = cursor_binding("attempts", scope_id, source_type, source_id)
        after = 0
        if "cursor" in query:
            after = cursor_decode(query["cursor"], kind="attempts", binding=binding)[
                "after"
            ]
        rows = selectors.attempt_page(
            scope_id=scope_id,
            source_type=source_type,
            source_id=source_id,
            after_id=after,
            limit=query["limit"],
        )
        page, next_cursor = next_page(
            rows,
            limit=query["limit"],
            kind="attempts",
            binding=binding,
            position_of=lambda row: {"after": row["id"]},
        )
        return Response(
            {"items": [attempt_item(row) for row in page], "next_cursor": next_cursor}
        )
