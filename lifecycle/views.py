"""Lifecycle views: parse, authorize, call one service or selector, render.

Closing a session needs a contributor grant on the scope; holds, purge and
redaction an admin grant (api.md 3).
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from powercontext.api.cursors import Walk
from powercontext.api.middleware import request_id_of
from powercontext.api.openapi import documented
from powercontext.api.permissions import authorize, principal_of
from powercontext.api.requests import parse_body, parse_path, parse_query
from powercontext.principals import Role
from sessions_app.inputs import SessionPath
from sources import schemas as source_schemas
from sources.renderers import audit_record
from sources.views import SourceDetailView

from . import schemas, selectors, services
from .inputs import (
    HoldCreate,
    HoldListQuery,
    HoldPath,
    HoldRelease,
    PurgeRequest,
    Redact,
    RedactMatching,
    ScopePath,
    SessionClose,
    SourcePath,
)
from .renderers import closure_body, hold_body, purge_body, redaction_run_body

LIFECYCLE = ["lifecycle"]
REDACT_SUFFIX = "/redact"


class SessionCloseView(APIView):
    @documented(
        "close_session",
        tags=LIFECYCLE,
        path=SessionPath,
        body=SessionClose,
        answers={201: schemas.SessionClosure, 200: schemas.SessionClosure},
        errors=(404,),
    )
    def post(self, request: Request, scope_id: str, session_id: str) -> Response:
        parse_path(SessionPath, scope_id=scope_id, session_id=session_id)
        parse_body(SessionClose, request)
        authorize(principal_of(request), scope_id, Role.CONTRIBUTOR)
        closure, created = services.session_close(
            principal=principal_of(request),
            scope_id=scope_id,
            session_id=session_id,
            request_id=request_id_of(request),
        )
        return Response(closure_body(closure), status=201 if created else 200)


class HoldCollectionView(APIView):
    @documented(
        "list_legal_holds",
        tags=LIFECYCLE,
        path=ScopePath,
        query=HoldListQuery,
        answers={200: schemas.LegalHoldPage},
        errors=(400, 404),
    )
    def get(self, request: Request, scope_id: str) -> Response:
        parse_path(ScopePath, scope_id=scope_id)
        query = parse_query(HoldListQuery, request.query_params)
        authorize(principal_of(request), scope_id, Role.ADMIN)
        walk = Walk.of("legal-holds", scope_id)
        page = selectors.hold_page(
            scope_id=scope_id, position=walk.position(query.cursor), limit=query.limit
        )
        return Response(walk.body(page, hold_body))

    @documented(
        "set_legal_hold",
        tags=LIFECYCLE,
        path=ScopePath,
        body=HoldCreate,
        answers={201: schemas.LegalHold},
        errors=(404,),
    )
    def post(self, request: Request, scope_id: str) -> Response:
        parse_path(ScopePath, scope_id=scope_id)
        data = parse_body(HoldCreate, request)
        authorize(principal_of(request), scope_id, Role.ADMIN)
        hold = services.hold_set(
            principal=principal_of(request),
            scope_id=scope_id,
            request_id=request_id_of(request),
            **dict(data),
        )
        return Response(hold_body(hold), status=201)


class HoldReleaseView(APIView):
    @documented(
        "release_legal_hold",
        tags=LIFECYCLE,
        path=HoldPath,
        body=HoldRelease,
        answers={200: schemas.LegalHold},
        errors=(404,),
    )
    def post(self, request: Request, scope_id: str, hold_id: str) -> Response:
        parse_path(HoldPath, scope_id=scope_id, hold_id=hold_id)
        data = parse_body(HoldRelease, request)
        authorize(principal_of(request), scope_id, Role.ADMIN)
        hold = services.hold_release(
            principal=principal_of(request),
            scope_id=scope_id,
            hold_id=hold_id,
            reason=data.reason,
            request_id=request_id_of(request),
        )
        return Response(hold_body(hold))


class PurgeView(APIView):
    @documented(
        "purge_working_notes",
        tags=LIFECYCLE,
        path=ScopePath,
        body=PurgeRequest,
        answers={200: schemas.PurgeResult},
        errors=(404,),
    )
    def post(self, request: Request, scope_id: str) -> Response:
        parse_path(ScopePath, scope_id=scope_id)
        data = parse_body(PurgeRequest, request)
        authorize(principal_of(request), scope_id, Role.ADMIN)
        result = services.purge_run(
            principal=principal_of(request),
            scope_id=scope_id,
            older_than=timedelta(seconds=data.older_than_seconds),
            dry_run=data.dry_run,
            request_id=request_id_of(request),
        )
        return Response(purge_body(result))


class RedactView(SourceDetailView):
    """POST redacts ``source_id``; GET is the Source whose id ends in ``/redact``
    (decision 0015: an identity stays readable whatever it ends with)."""

    @extend_schema(exclude=True)
    def get(
        self, request: Request, scope_id: str, source_type: str, source_id: str
    ) -> Response:
        self.kwargs = {**self.kwargs, "source_id": source_id + REDACT_SUFFIX}
        return super().get(request, scope_id, source_type, source_id + REDACT_SUFFIX)

    @documented(
        "redact_source",
        tags=LIFECYCLE,
        path=SourcePath,
        body=Redact,
        answers={200: source_schemas.AuditRecord},
        errors=(404, 409),
    )
    def post(
        self, request: Request, scope_id: str, source_type: str, source_id: str
    ) -> Response:
        path = parse_path(SourcePath, **self.kwargs)
        data = parse_body(Redact, request)
        authorize(principal_of(request), scope_id, Role.ADMIN)
        row = services.source_redact(
            principal=principal_of(request),
            reason=data.reason,
            request_id=request_id_of(request),
            **dict(path),
        )
        return Response(audit_record(row, timezone.now()))


class RedactMatchingView(APIView):
    @documented(
        "redact_matching",
        tags=LIFECYCLE,
        path=ScopePath,
        body=RedactMatching,
        answers={200: schemas.RedactionRun},
        errors=(404,),
    )
    def post(self, request: Request, scope_id: str) -> Response:
        parse_path(ScopePath, scope_id=scope_id)
        data = parse_body(RedactMatching, request)
        search = data.search_query()
        authorize(principal_of(request), scope_id, Role.ADMIN)
        run = services.redact_matching(
            principal=principal_of(request),
            scope_id=scope_id,
            query=search,
            reason=data.reason,
            dry_run=data.dry_run,
            request_id=request_id_of(request),
        )
        return Response(redaction_run_body(run))
