"""Audit views: what the registry holds and every attempt to capture it."""

from __future__ import annotations

from django.http import HttpResponseBase
from django.utils import timezone
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from powercontext.api.cursors import Walk
from powercontext.api.openapi import documented
from powercontext.api.permissions import authorize, principal_of
from powercontext.api.requests import parse_path, parse_query
from powercontext.db.replica import reads_from_replica
from powercontext.principals import Role

from .. import schemas, selectors
from ..inputs import PageQuery, ScopePath, SourceAuditQuery, SourcePath
from ..renderers import attempt_item, audit_record

AUDIT = ["audit"]


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
