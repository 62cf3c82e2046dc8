"""Registry views: parse, authorize, call one service or selector, render."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from powercontext.api.cursors import cursor_binding, cursor_decode, next_page
from powercontext.api.middleware import request_id_of
from powercontext.api.models import Role
from powercontext.api.permissions import authorize, authorize_everywhere, principal_of
from powercontext.api.schema import error_responses
from powercontext.api.validation import validate_body, validate_path, validate_query

from . import selectors, services
from .serializers import (
    ScopeCreateInput,
    ScopeDescriptorSerializer,
    ScopeListQuery,
    ScopePageSerializer,
    scope_descriptor,
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
