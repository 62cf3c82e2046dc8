"""Evidence and handoff views: parse, authorize, call one function, render.

Order of checks (api.md 1): authentication (401), the body's shape (422),
authorization on the scope the body or path names (403, also for an unknown
scope), then the function, which raises 404/409/422/503 domain errors.
"""

from __future__ import annotations

from typing import TypeVar

from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from powercontext.api.middleware import request_id_of
from powercontext.api.openapi import documented
from powercontext.api.permissions import authorize, principal_of
from powercontext.api.requests import parse_body, parse_path
from powercontext.api.schema import ErrorResponseSerializer
from powercontext.principals import Role
from sources.inputs import ScopePath

from . import schemas, services
from .content import PreparedHandoff
from .evidence import evidence_resolve
from .hints import handoff_hint
from .inputs import (
    ActivateHandoff,
    CommitHandoff,
    ContinueHandoff,
    EvidenceResolve,
    FinalizeHandoff,
    PrepareHandoff,
    PrepareHandoffHint,
    ScopedRequest,
)
from .renderers import (
    committed_body,
    evidence_resolution_body,
    prepared_body,
    prepared_context_body,
    resolution_body,
)
from .selectors import handoff_select

EVIDENCE, HANDOFF = ["evidence"], ["handoff"]
GENERATION_UNAVAILABLE = OpenApiResponse(
    ErrorResponseSerializer,
    description=(
        "`handoff_generation_unavailable`: this service has no language model "
        "(always, after the checks above). Also `unavailable` when the "
        "database cannot be reached."
    ),
)

Body = TypeVar("Body", bound=ScopedRequest)


def _authorized_body(model: type[Body], request: Request, role: Role) -> Body:
    """The validated body, after authorizing ``role`` on the scope it names."""
    data = parse_body(model, request)
    authorize(principal_of(request), data.scope_id, role)
    return data


class EvidenceResolveView(APIView):
    @documented(
        "resolve_evidence",
        tags=EVIDENCE,
        path=ScopePath,
        body=EvidenceResolve,
        answers={200: schemas.EvidenceResolution},
        errors=(404,),
    )
    def post(self, request: Request, scope_id: str) -> Response:
        parse_path(ScopePath, scope_id=scope_id)
        data = parse_body(EvidenceResolve, request)
        authorize(principal_of(request), scope_id, Role.VIEWER)
        resolution = evidence_resolve(
            scope_id=scope_id, purpose=data.purpose, refs=data.source_refs()
        )
        return Response(evidence_resolution_body(resolution))


class FinalizeHandoffView(APIView):
    @documented(
        "finalize_handoff",
        tags=HANDOFF,
        body=FinalizeHandoff,
        answers={200: PreparedHandoff},
        errors=(404,),
    )
    def post(self, request: Request) -> Response:
        data = _authorized_body(FinalizeHandoff, request, Role.CONTRIBUTOR)
        prepared = services.handoff_finalize(scope_id=data.scope_id, draft=data.draft)
        return Response(prepared_body(prepared))


class CommitHandoffView(APIView):
    @documented(
        "commit_handoff",
        tags=HANDOFF,
        body=CommitHandoff,
        answers={200: schemas.CommittedHandoff},
        errors=(404, 409),
    )
    def post(self, request: Request) -> Response:
        data = _authorized_body(CommitHandoff, request, Role.CONTRIBUTOR)
        committed = services.handoff_commit(
            principal=principal_of(request),
            scope_id=data.scope_id,
            handoff=data.handoff,
            request_id=request_id_of(request),
        )
        headers = None if committed.created else {"Idempotent-Replayed": "true"}
        return Response(committed_body(committed), headers=headers)


class ContinueHandoffView(APIView):
    @documented(
        "continue_handoff",
        tags=HANDOFF,
        body=ContinueHandoff,
        answers={200: schemas.HandoffResolution},
        errors=(404,),
    )
    def post(self, request: Request) -> Response:
        data = _authorized_body(ContinueHandoff, request, Role.VIEWER)
        selected = handoff_select(
            scope_id=data.scope_id,
            selection=data.selection,
            prepared=data.prepared,
            revision=data.revision,
            now=timezone.now(),
        )
        return Response(resolution_body(selected))


class PrepareHandoffHintView(APIView):
    @documented(
        "prepare_handoff_hint",
        tags=HANDOFF,
        body=PrepareHandoffHint,
        answers={200: schemas.PreparedContext},
        errors=(404,),
    )
    def post(self, request: Request) -> Response:
        data = _authorized_body(PrepareHandoffHint, request, Role.VIEWER)
        text = handoff_hint(
            scope_id=data.scope_id,
            selection=data.selection,
            prepared=data.prepared,
            revision=data.revision,
            max_bytes=data.max_bytes,
        )
        return Response(prepared_context_body(text))


class PrepareHandoffView(APIView):
    @documented(
        "prepare_handoff",
        tags=HANDOFF,
        body=PrepareHandoff,
        answers={503: GENERATION_UNAVAILABLE},
        errors=(404,),
    )
    def post(self, request: Request) -> Response:
        data = _authorized_body(PrepareHandoff, request, Role.CONTRIBUTOR)
        services.handoff_prepare(scope_id=data.scope_id)


class ActivateHandoffView(APIView):
    @documented(
        "activate_handoff",
        tags=HANDOFF,
        body=ActivateHandoff,
        answers={503: GENERATION_UNAVAILABLE},
        errors=(404,),
    )
    def post(self, request: Request) -> Response:
        data = _authorized_body(ActivateHandoff, request, Role.CONTRIBUTOR)
        services.handoff_activate(
            scope_id=data.scope_id, boundary_source=data.boundary_source
        )
