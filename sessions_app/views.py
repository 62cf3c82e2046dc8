"""Envelope and working-notes views: parse, authorize, call one service or
selector, render. Errors are raised, never built here."""

from __future__ import annotations

from django.http import HttpResponse, HttpResponseNotModified
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from powercontext.api.middleware import request_id_of
from powercontext.api.models import Role
from powercontext.api.permissions import authorize, principal_of
from powercontext.api.schema import error_responses
from powercontext.api.validation import validate_body, validate_path

from . import selectors, services
from .preconditions import IfMatch, etag_for, if_none_match_hits
from .selectors import EnvelopeState
from .serializers import (
    EnvelopeSerializer,
    EnvelopeWriteInput,
    WorkingNotesPutInput,
    WorkingNotesSerializer,
    WorkingNotesWriteSerializer,
    envelope_body,
    notes_capture,
    working_notes_body,
    working_notes_write_body,
)

TAGS = ["session envelopes"]
SESSION_PATH = [
    OpenApiParameter("scope_id", str, OpenApiParameter.PATH),
    OpenApiParameter(
        "session_id",
        str,
        OpenApiParameter.PATH,
        description="1..256 characters, not blank; may contain '/' (percent-encoded "
        "or not).",
    ),
]
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
    validate_path(scope_id=scope_id, session_id=session_id)
    authorize(principal_of(request), scope_id, role)


class EnvelopeView(APIView):
    @extend_schema(
        operation_id="get_session_envelope",
        parameters=[*SESSION_PATH, IF_NONE_MATCH, ETAG],
        responses={
            200: EnvelopeSerializer,
            304: OpenApiResponse(description="Not modified (If-None-Match)."),
            **error_responses(404),
        },
        tags=TAGS,
    )
    def get(self, request: Request, scope_id: str, session_id: str) -> HttpResponse:
        _authorized(request, scope_id, session_id, Role.VIEWER)
        state = selectors.envelope_get(scope_id=scope_id, session_id=session_id)
        if if_none_match_hits(request.headers.get("If-None-Match"), state.version):
            not_modified = HttpResponseNotModified()
            not_modified["ETag"] = etag_for(state.version)
            return not_modified
        return _envelope_response(state, created=False)

    @extend_schema(
        operation_id="replace_session_envelope",
        parameters=[*SESSION_PATH, IF_MATCH, ETAG],
        request=EnvelopeWriteInput,
        responses={
            200: EnvelopeSerializer,
            201: EnvelopeSerializer,
            **error_responses(404, 412),
        },
        tags=TAGS,
    )
    def put(self, request: Request, scope_id: str, session_id: str) -> Response:
        validate_path(scope_id=scope_id, session_id=session_id)
        data = validate_body(EnvelopeWriteInput, request.data)
        authorize(principal_of(request), scope_id, Role.CONTRIBUTOR)
        written = services.envelope_replace(
            scope_id=scope_id,
            session_id=session_id,
            meta=data["meta"],
            if_match=IfMatch.from_header(request.headers.get("If-Match")),
            principal=principal_of(request),
            request_id=request_id_of(request),
        )
        return _envelope_response(written.state, created=written.created)

    @extend_schema(
        operation_id="patch_session_envelope",
        parameters=[*SESSION_PATH, IF_MATCH, ETAG],
        request=EnvelopeWriteInput,
        responses={
            200: EnvelopeSerializer,
            201: EnvelopeSerializer,
            **error_responses(404, 412),
        },
        tags=TAGS,
    )
    def patch(self, request: Request, scope_id: str, session_id: str) -> Response:
        validate_path(scope_id=scope_id, session_id=session_id)
        data = validate_body(EnvelopeWriteInput, request.data)
        authorize(principal_of(request), scope_id, Role.CONTRIBUTOR)
        written = services.envelope_overlay(
            scope_id=scope_id,
            session_id=session_id,
            patch=data["meta"],
            if_match=IfMatch.from_header(request.headers.get("If-Match")),
            principal=principal_of(request),
            request_id=request_id_of(request),
        )
        return _envelope_response(written.state, created=written.created)


class WorkingNotesView(APIView):
    @extend_schema(
        operation_id="get_working_notes",
        parameters=SESSION_PATH,
        responses={200: WorkingNotesSerializer, **error_responses(404)},
        tags=TAGS,
    )
    def get(self, request: Request, scope_id: str, session_id: str) -> Response:
        _authorized(request, scope_id, session_id, Role.VIEWER)
        state = selectors.working_notes_get(scope_id=scope_id, session_id=session_id)
        return Response(working_notes_body(state))

    @extend_schema(
        operation_id="put_working_notes",
        parameters=[*SESSION_PATH, IF_MATCH],
        request=WorkingNotesPutInput,
        responses={
            200: WorkingNotesWriteSerializer,
            201: WorkingNotesWriteSerializer,
            **error_responses(404, 409, 412),
        },
        tags=TAGS,
    )
    def put(self, request: Request, scope_id: str, session_id: str) -> Response:
        validate_path(scope_id=scope_id, session_id=session_id)
        data = validate_body(WorkingNotesPutInput, request.data)
        authorize(principal_of(request), scope_id, Role.CONTRIBUTOR)
        written = services.working_notes_put(
            scope_id=scope_id,
            session_id=session_id,
            notes=data["notes"],
            capture=notes_capture(data["capture"]),
            if_match=IfMatch.from_header(request.headers.get("If-Match")),
            principal=principal_of(request),
            request_id=request_id_of(request),
        )
        return Response(
            working_notes_write_body(written), status=201 if written.created else 200
        )

    @extend_schema(
        operation_id="delete_working_notes",
        parameters=[*SESSION_PATH, IF_MATCH],
        responses={200: WorkingNotesSerializer, **error_responses(404, 412)},
        tags=TAGS,
    )
    def delete(self, request: Request, scope_id: str, session_id: str) -> Response:
        _authorized(request, scope_id, session_id, Role.CONTRIBUTOR)
        written = services.working_notes_clear(
            scope_id=scope_id,
            session_id=session_id,
            if_match=IfMatch.from_header(request.headers.get("If-Match")),
            principal=principal_of(request),
            request_id=request_id_of(request),
        )
        return Response(working_notes_body(written.notes))


class WorkingNotesFoldView(APIView):
    @extend_schema(
        operation_id="fold_working_notes",
        parameters=SESSION_PATH,
        responses={
            (200, "text/plain"): OpenApiTypes.STR,
            204: OpenApiResponse(description="No notes: nothing to fold."),
            **error_responses(404),
        },
        tags=TAGS,
    )
    def get(self, request: Request, scope_id: str, session_id: str) -> HttpResponse:
        _authorized(request, scope_id, session_id, Role.VIEWER)
        text = selectors.working_notes_fold(scope_id=scope_id, session_id=session_id)
        if text is None:
            no_content = HttpResponse(status=204)
            del no_content["Content-Type"]
            return no_content
        return HttpResponse(text, content_type="text/plain; charset=utf-8")
