"""Evidence and handoff views: parse, authorize, call one function, render.

Order of checks (api.md 1): authentication (401), the body's shape (422),
authorization on the scope the body or path names (403, also for an unknown
scope), then the function, which raises 404/409/422/503 domain errors.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from powercontext.api.middleware import request_id_of
from powercontext.api.permissions import authorize, principal_of
from powercontext.api.schema import ErrorResponseSerializer, error_responses
from powercontext.api.validation import validate_body, validate_path
from powercontext.principals import Role

from . import services
from .evidence import Purpose, SourceRef, evidence_resolve
from .hints import handoff_hint
from .selectors import handoff_select
from .serializers import (
    ActivateHandoffSerializer,
    CommitHandoffSerializer,
    CommittedHandoffSerializer,
    ContinueHandoffSerializer,
    EvidenceResolutionSerializer,
    EvidenceResolveSerializer,
    FinalizeHandoffSerializer,
    HandoffResolutionSerializer,
    PreparedContextSerializer,
    PreparedHandoffSerializer,
    PrepareHandoffHintSerializer,
    PrepareHandoffSerializer,
    committed_body,
    evidence_resolution_body,
    prepared_context_body,
    resolution_body,
)

GENERATION_UNAVAILABLE = {
    503: OpenApiResponse(
        ErrorResponseSerializer,
        description=(
            "`handoff_generation_unavailable`: this service has no language model "
            "(always, after the checks above). Also `unavailable` when the "
            "database cannot be reached."
        ),
    )
}


def _validated(serializer: Any, request: Request, role: Role) -> dict[str, Any]:
    """The validated body, after authorizing ``role`` on its ``scope_id``."""
    data = validate_body(serializer, request.data)
    authorize(principal_of(request), data["scope_id"], role)
    return data


class EvidenceResolveView(APIView):
    @extend_schema(
        operation_id="resolve_evidence",
        parameters=[OpenApiParameter("scope_id", str, OpenApiParameter.PATH)],
        request=EvidenceResolveSerializer,
        responses={200: EvidenceResolutionSerializer, **error_responses(404)},
        tags=["evidence"],
    )
    def post(self, request: Request, scope_id: str) -> Response:
        validate_path(scope_id=scope_id)
        data = validate_body(EvidenceResolveSerializer, request.data)
        authorize(principal_of(request), scope_id, Role.VIEWER)
        resolution = evidence_resolve(
            scope_id=scope_id,
            purpose=Purpose(data["purpose"]),
            refs=[SourceRef(**ref) for ref in data["refs"]],
        )
        return Response(evidence_resolution_body(resolution))


class FinalizeHandoffView(APIView):
    @extend_schema(
        operation_id="finalize_handoff",
        request=FinalizeHandoffSerializer,
        responses={200: PreparedHandoffSerializer, **error_responses(404)},
        tags=["handoff"],
    )
    def post(self, request: Request) -> Response:
        data = _validated(FinalizeHandoffSerializer, request, Role.CONTRIBUTOR)
        prepared = services.handoff_finalize(
            scope_id=data["scope_id"], draft=data["draft"]
        )
        return Response(prepared)


class CommitHandoffView(APIView):
    @extend_schema(
        operation_id="commit_handoff",
        request=CommitHandoffSerializer,
        responses={200: CommittedHandoffSerializer, **error_responses(404, 409)},
        tags=["handoff"],
    )
    def post(self, request: Request) -> Response:
        data = _validated(CommitHandoffSerializer, request, Role.CONTRIBUTOR)
        committed = services.handoff_commit(
            principal=principal_of(request),
            scope_id=data["scope_id"],
            handoff=data["handoff"],
            request_id=request_id_of(request),
        )
        headers = {} if committed.created else {"Idempotent-Replayed": "true"}
        return Response(committed_body(committed), headers=headers)


class ContinueHandoffView(APIView):
    @extend_schema(
        operation_id="continue_handoff",
        request=ContinueHandoffSerializer,
        responses={200: HandoffResolutionSerializer, **error_responses(404)},
        tags=["handoff"],
    )
    def post(self, request: Request) -> Response:
        data = _validated(ContinueHandoffSerializer, request, Role.VIEWER)
        selected = handoff_select(
            scope_id=data["scope_id"],
            selection=data["selection"],
            prepared=data["prepared"],
            revision=data["revision"],
            now=timezone.now(),
        )
        return Response(resolution_body(selected))


class PrepareHandoffHintView(APIView):
    @extend_schema(
        operation_id="prepare_handoff_hint",
        request=PrepareHandoffHintSerializer,
        responses={200: PreparedContextSerializer, **error_responses(404)},
        tags=["handoff"],
    )
    def post(self, request: Request) -> Response:
        data = _validated(PrepareHandoffHintSerializer, request, Role.VIEWER)
        text = handoff_hint(
            scope_id=data["scope_id"],
            selection=data["selection"],
            prepared=data["prepared"],
            revision=data["revision"],
            max_bytes=data["max_bytes"],
        )
        return Response(prepared_context_body(text))


class PrepareHandoffView(APIView):
    @extend_schema(
        operation_id="prepare_handoff",
        request=PrepareHandoffSerializer,
        responses={**error_responses(404), **GENERATION_UNAVAILABLE},
        tags=["handoff"],
    )
    def post(self, request: Request) -> Response:
        data = _validated(PrepareHandoffSerializer, request, Role.CONTRIBUTOR)
        services.handoff_prepare(scope_id=data["scope_id"])


class ActivateHandoffView(APIView):
    @extend_schema(
        operation_id="activate_handoff",
        request=ActivateHandoffSerializer,
        responses={**error_responses(404), **GENERATION_UNAVAILABLE},
        tags=["handoff"],
    )
    def post(self, request: Request) -> Response:
        data = _validated(ActivateHandoffSerializer, request, Role.CONTRIBUTOR)
        services.handoff_activate(
            scope_id=data["scope_id"], boundary_source=data["boundary_source"]
        )
