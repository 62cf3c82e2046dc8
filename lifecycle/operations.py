"""The lifecycle's operations: session close, legal holds, purge, redaction, export.

Closing a session needs a contributor grant on the scope; holds, purge,
redaction and export an admin grant (api.md 3). Each is declared once
(``powercontext.operations``): its view, route, OpenAPI entry, MCP tool and
authorization row are derived from it. Export is an operator's action and has no
MCP tool (docs/api.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

from django.utils import timezone

from powercontext.operations import (
    READ_ONLY,
    ByteStream,
    Context,
    Described,
    Given,
    Listing,
    Operation,
    Route,
    ToolSpec,
    on_scope,
    writes,
)
from powercontext.pages import Page
from powercontext.principals import Role
from sessions_app.inputs import SessionPath
from sources import schemas as source_schemas
from sources.operations import SCOPE, source_get_operation
from sources.renderers import audit_record

from . import schemas, selectors, services
from .bundles.export import chunked
from .bundles.format import MEDIA_TYPE
from .inputs import (
    ExportQuery,
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

LIFECYCLE = ("lifecycle",)
REDACT_SUFFIX = "/redact"
_ADMIN = "Needs an admin grant."

# The close route captures ``session_id`` greedily up to ``/close``, as the
# envelope routes do up to their suffixes, none of which ends another. The
# redact route captures ``source_id`` up to ``/redact``; a GET on such a path is
# the Source whose id ends in ``/redact`` (decision 0015).
SESSION_CLOSE = Route(
    "session-close",
    r"^scopes/(?P<scope_id>[^/]+)/sessions/(?P<session_id>[\s\S]+)/close\Z",
    regex=True,
)
HOLD_COLLECTION = Route("legal-hold-collection", f"{SCOPE}/legal-holds")
HOLD_RELEASE = Route("legal-hold-release", f"{SCOPE}/legal-holds/<str:hold_id>/release")
PURGE = Route("scope-purge", f"{SCOPE}/purge")
EXPORT = Route("scope-export", f"{SCOPE}/export")
REDACTIONS = Route("scope-redactions", f"{SCOPE}/redactions")
REDACT = Route(
    "source-redact",
    r"^scopes/(?P<scope_id>[^/]+)/sources/(?P<source_type>[^/]+)/"
    r"(?P<source_id>[\s\S]+)/redact\Z",
    regex=True,
)


def _close(given: Given, context: Context) -> tuple[Any, bool]:
    return services.session_close(
        principal=context.principal,
        **dict(given.path),
        request_id=context.request_id,
    )


def _hold_page(given: Given, context: Context) -> Page[Any]:
    return selectors.hold_page(
        scope_id=given.path.scope_id,
        position=context.position,
        limit=given.query.limit,
    )


def _hold_set(given: Given, context: Context) -> Any:
    return services.hold_set(
        principal=context.principal,
        scope_id=given.path.scope_id,
        request_id=context.request_id,
        **dict(given.body),
    )


def _hold_release(given: Given, context: Context) -> Any:
    return services.hold_release(
        principal=context.principal,
        **dict(given.path),
        reason=given.body.reason,
        request_id=context.request_id,
    )


def _purge(given: Given, context: Context) -> Any:
    return services.purge_run(
        principal=context.principal,
        scope_id=given.path.scope_id,
        older_than=timedelta(seconds=given.body.older_than_seconds),
        dry_run=given.body.dry_run,
        request_id=context.request_id,
    )


def _export(given: Given, context: Context) -> Iterator[bytes]:
    return services.scope_export(
        scope_id=given.path.scope_id,
        session_id=given.query.session_id,
        exported_by=context.principal.name,
        via="http",
        request_id=context.request_id,
    )


def _redact_matching(given: Given, context: Context) -> Any:
    data = given.body
    return services.redact_matching(
        principal=context.principal,
        scope_id=given.path.scope_id,
        query=data.search_query(),
        reason=data.reason,
        dry_run=data.dry_run,
        request_id=context.request_id,
    )


def _redact(given: Given, context: Context) -> Any:
    return services.source_redact(
        principal=context.principal,
        reason=given.body.reason,
        request_id=context.request_id,
        **dict(given.path),
    )


def _with_redact_suffix(captured: dict[str, str]) -> dict[str, str]:
    return {**captured, "source_id": captured["source_id"] + REDACT_SUFFIX}


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "close_session",
        "POST",
        SESSION_CLOSE,
        on_scope(Role.CONTRIBUTOR),
        _close,
        lambda closed: closure_body(closed[0]),
        LIFECYCLE,
        path=SessionPath,
        body=SessionClose,
        status=lambda closed: 201 if closed[1] else 200,
        answers={201: schemas.SessionClosure, 200: schemas.SessionClosure},
        errors=(404,),
        tool=ToolSpec(
            "close_session",
            "Close a session when its work is finished: from then on its working "
            "notes are unavailable as evidence ('closed'), and new notes and "
            "envelope writes are refused (409 session_closed). Closing again "
            "returns the same record. Needs a contributor grant.",
            writes(destructive=True, idempotent=True),
        ),
    ),
    Operation(
        "list_legal_holds",
        "GET",
        HOLD_COLLECTION,
        on_scope(Role.ADMIN),
        _hold_page,
        hold_body,
        LIFECYCLE,
        path=ScopePath,
        query=HoldListQuery,
        listing=Listing("legal-holds", lambda given: (given.path.scope_id,)),
        answers={200: schemas.LegalHoldPage},
        errors=(400, 404),
        tool=ToolSpec(
            "list_legal_holds",
            "List the scope's legal holds, newest first, released ones included. "
            + _ADMIN,
            READ_ONLY,
        ),
    ),
    Operation(
        "set_legal_hold",
        "POST",
        HOLD_COLLECTION,
        on_scope(Role.ADMIN),
        _hold_set,
        hold_body,
        LIFECYCLE,
        path=ScopePath,
        body=HoldCreate,
        status=201,
        answers={201: schemas.LegalHold},
        errors=(404,),
        tool=ToolSpec(
            "set_legal_hold",
            "Put the scope, or one session of it (session_id), under a legal hold "
            "with a reason: nothing it covers is purged or redacted until the hold "
            "is released. Holds stack. " + _ADMIN,
            writes(destructive=False, idempotent=False),
        ),
    ),
    Operation(
        "release_legal_hold",
        "POST",
        HOLD_RELEASE,
        on_scope(Role.ADMIN),
        _hold_release,
        hold_body,
        LIFECYCLE,
        path=HoldPath,
        body=HoldRelease,
        answers={200: schemas.LegalHold},
        errors=(404,),
        tool=ToolSpec(
            "release_legal_hold",
            "Release one legal hold by hold_id, with a reason. " + _ADMIN,
            writes(destructive=False, idempotent=True),
        ),
    ),
    Operation(
        "purge_working_notes",
        "POST",
        PURGE,
        on_scope(Role.ADMIN),
        _purge,
        purge_body,
        LIFECYCLE,
        path=ScopePath,
        body=PurgeRequest,
        answers={200: schemas.PurgeResult},
        errors=(404,),
        tool=ToolSpec(
            "purge_working_notes",
            "Tombstone the scope's working notes expired or closed longer ago than "
            "older_than_seconds (never held ones, never ones a committed handoff "
            "cites), and clear closed sessions' envelope notes. dry_run counts "
            "without changing anything. " + _ADMIN,
            writes(destructive=True, idempotent=True),
        ),
    ),
    Operation(
        "export_scope",
        "GET",
        EXPORT,
        on_scope(Role.ADMIN),
        _export,
        lambda lines: ByteStream(chunked(lines), MEDIA_TYPE),
        LIFECYCLE,
        path=ScopePath,
        query=ExportQuery,
        query_invalid_status=400,
        answers={
            (200, MEDIA_TYPE): Described(
                "The bundle: JSON Lines (application/x-ndjson), the manifest first "
                "and the trailer last (docs/export.md).",
                text=True,
            )
        },
        errors=(400, 404),
        description=(
            "The scope, or one session of it, as a bundle (docs/export.md), streamed."
        ),
    ),
    Operation(
        "redact_matching",
        "POST",
        REDACTIONS,
        on_scope(Role.ADMIN),
        _redact_matching,
        redaction_run_body,
        LIFECYCLE,
        path=ScopePath,
        body=RedactMatching,
        answers={200: schemas.RedactionRun},
        errors=(404,),
    ),
    # GET on the redact route: the Source whose id ends in ``/redact`` (decision
    # 0015: an identity stays readable whatever it ends with). Not documented
    # apart: it is ``get_source``.
    source_get_operation(REDACT, documented=False, path_from=_with_redact_suffix),
    Operation(
        "redact_source",
        "POST",
        REDACT,
        on_scope(Role.ADMIN),
        _redact,
        lambda row: audit_record(row, timezone.now()),
        LIFECYCLE,
        path=SourcePath,
        body=Redact,
        answers={200: source_schemas.AuditRecord},
        errors=(404, 409),
        description=(
            "POST redacts ``source_id``; GET is the Source whose id ends in "
            "``/redact``\n(decision 0015: an identity stays readable whatever it "
            "ends with)."
        ),
        tool=ToolSpec(
            "redact_source",
            "Redact one Source (content or working note) with a recorded reason: "
            "its text and metadata are removed for good, its identity and digests "
            "stay as a tombstone. Refused while a legal hold applies. " + _ADMIN,
            writes(destructive=True, idempotent=True),
        ),
    ),
)
