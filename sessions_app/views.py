"""Envelope and working-notes views: parse, authorize, call one service or
selector, render. Errors are raised, never built here."""

from __future__ import annotations

from django.http import HttpResponse, HttpResponseNotModified
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from powercontext.api.cursors import Walk
from powercontext.api.middleware import request_id_of
from powercontext.api.openapi import documented
from powercontext.api.permissions import authorize, principal_of
from powercontext.api.requests import parse_body, parse_path, parse_query
from powercontext.principals import Role
from sources.inputs import ScopePath

from . import schemas, selectors, services
from .inputs import EnvelopeSearchQuery, EnvelopeWrite, SessionPath, WorkingNotesPut
from .preconditions import IfMatch, etag_for, if_none_match_hits
from .renderers import (
    envelope_body,
    notes_search_item,
    working_notes_body,
    working_notes_write_body,
)
from .search import envelope_notes_search
from .selectors import EnvelopeState

TAGS = ["session envelopes"]
ETAG = OpenApiParameter(
    "ETag",
    str,
    OpenApiParameter.HEADER,
    response=[200, 201, 304],
    description='The envelope version as a strong entity tag, e.g. "12".',
)
IF_MATCH = OpenApiParameter(
    "If-Match",
    str,
    OpenApiParameter.HEADER,
    description='Write only if the envelope is at this ETag ("12"), or exists (*). '
    "A mismatch, or any If-Match on a missing envelope, is 412.",
)
IF_NONE_MATCH = OpenApiParameter(
    "If-None-Match",
    str,
    OpenApiParameter.HEADER,
    description="304 (no body) when it names the current ETag.",
)


def _envelope_response(state: EnvelopeState | None, *, created: bool) -> Response:
    assert state is not None, "envelope writes always leave an envelope"
    return Response(
        envelope_body(state),
        status=201 if created else 200,
        headers={"ETag": etag_for(state.version)},
    )


def _authorized(request: Request, scope_id: str, session_id: str, role: Role) -> None:
    parse_path(SessionPath, scope_id=scope_id, session_id=session_id)
    authorize(principal_of(request), scope_id, role)


def _if_match(request: Request) -> IfMatch | None:
    return IfMatch.from_header(request.headers.get("If-Match"))


class EnvelopeView(APIView):
    @documented(
        "get_session_envelope",
        tags=TAGS,
        path=SessionPath,
        headers=[IF_NONE_MATCH, ETAG],
        answers={
            200: schemas.Envelope,
            304: OpenApiResponse(description="Not modified (If-None-Match)."),
        },
        errors=(404,),
    )
    def get(self, request: Request, scope_id: str, session_id: str) -> HttpResponse:
        _authorized(request, scope_id, session_id, Role.VIEWER)
        state = selectors.envelope_get(scope_id=scope_id, session_id=session_id)
        if if_none_match_hits(request.headers.get("If-None-Match"), state.version):
            not_modified = HttpResponseNotModified()
            not_modified["ETag"] = etag_for(state.version)
            return not_modified
        return _envelope_response(state, created=False)

    @documented(
        "replace_session_envelope",
        tags=TAGS,
        path=SessionPath,
        body=EnvelopeWrite,
        headers=[IF_MATCH, ETAG],
        answers={200: schemas.Envelope, 201: schemas.Envelope},
        errors=(404, 409, 412),
    )
    def put(self, request: Request, scope_id: str, session_id: str) -> Response:
        parse_path(SessionPath, scope_id=scope_id, session_id=session_id)
        data = parse_body(EnvelopeWrite, request)
        authorize(principal_of(request), scope_id, Role.CONTRIBUTOR)
        written = services.envelope_replace(
            scope_id=scope_id,
            session_id=session_id,
            meta=data.meta,
            if_match=_if_match(request),
            principal=principal_of(request),
            request_id=request_id_of(request),
        )
        return _envelope_response(written.state, created=written.created)

    @documented(
        "patch_session_envelope",
        tags=TAGS,
        path=SessionPath,
        body=EnvelopeWrite,
        headers=[IF_MATCH, ETAG],
        answers={200: schemas.Envelope, 201: schemas.Envelope},
        errors=(404, 409, 412),
    )
    def patch(self, request: Request, scope_id: str, session_id: str) -> Response:
        parse_path(SessionPath, scope_id=scope_id, session_id=session_id)
        data = parse_body(EnvelopeWrite, request)
        authorize(principal_of(request), scope_id, Role.CONTRIBUTOR)
        written = services.envelope_overlay(
            scope_id=scope_id,
            session_id=session_id,
            patch=data.meta,
            if_match=_if_match(request),
            principal=principal_of(request),
            request_id=request_id_of(request),
        )
        return _envelope_response(written.state, created=written.created)


class WorkingNotesView(APIView):
    @documented(
        "get_working_notes",
        tags=TAGS,
        path=SessionPath,
        answers={200: schemas.WorkingNotes},
        errors=(404,),
    )
    def get(self, request: Request, scope_id: str, session_id: str) -> Response:
        _authorized(request, scope_id, session_id, Role.VIEWER)
        state = selectors.working_notes_get(scope_id=scope_id, session_id=session_id)
        return Response(working_notes_body(state))

    @documented(
        "put_working_notes",
        tags=TAGS,
        path=SessionPath,
        body=WorkingNotesPut,
        headers=[IF_MATCH],
        answers={200: schemas.WorkingNotesWrite, 201: schemas.WorkingNotesWrite},
        errors=(404, 409, 412),
    )
    def put(self, request: Request, scope_id: str, session_id: str) -> Response:
        parse_path(SessionPath, scope_id=scope_id, session_id=session_id)
        data = parse_body(WorkingNotesPut, request)
        authorize(principal_of(request), scope_id, Role.CONTRIBUTOR)
        written = services.working_notes_put(
            scope_id=scope_id,
            session_id=session_id,
            notes=data.notes,
            capture=None if data.capture is None else data.capture.capture(),
            if_match=_if_match(request),
            principal=principal_of(request),
            request_id=request_id_of(request),
        )
        status = 201 if written.created else 200
        return Response(working_notes_write_body(written), status=status)

    @documented(
        "delete_working_notes",
        tags=TAGS,
        path=SessionPath,
        headers=[IF_MATCH],
        answers={200: schemas.WorkingNotes},
        errors=(404, 409, 412),
    )
    def delete(self, request: Request, scope_id: str, session_id: str) -> Response:
        _authorized(request, scope_id, session_id, Role.CONTRIBUTOR)
        written = services.working_notes_clear(
            scope_id=scope_id,
            session_id=session_id,
            if_match=_if_match(request),
            principal=principal_of(request),
            request_id=request_id_of(request),
        )
        return Response(working_notes_body(written.notes))


class WorkingNotesFoldView(APIView):
    @documented(
        "fold_working_notes",
        tags=TAGS,
        path=SessionPath,
        answers={
            (200, "text/plain"): OpenApiTypes.STR,
            204: OpenApiResponse(description="No notes: nothing to fold."),
        },
        errors=(404,),
    )
    def get(self, request: Request, scope_id: str, session_id: str) -> HttpResponse:
        _authorized(request, scope_id, session_id, Role.VIEWER)
        text = selectors.working_notes_fold(scope_id=scope_id, session_id=session_id)
        if text is None:
            no_content = HttpResponse(status=204)
            del no_content["Content-Type"]
            return no_content
        return HttpResponse(text, content_type="text/plain; charset=utf-8")


class EnvelopeSearchView(APIView):
    @documented(
        "search_envelopes",
        tags=TAGS,
        path=ScopePath,
        query=EnvelopeSearchQuery,
        answers={200: schemas.EnvelopeSearchPage},
        errors=(400, 404, 410),
    )
    def get(self, request: Request, scope_id: str) -> Response:
        parse_path(ScopePath, scope_id=scope_id)
        query = parse_query(EnvelopeSearchQuery, request.query_params)
        search = query.search_query()
        authorize(principal_of(request), scope_id, Role.VIEWER)
        walk = Walk.of("envelope-search", scope_id, search.match, search.text)
        page = envelope_notes_search(
            scope_id=scope_id,
            query=search,
            position=walk.position(query.cursor),
            limit=query.limit,
        )
        return Response(walk.body(page, notes_search_item))
