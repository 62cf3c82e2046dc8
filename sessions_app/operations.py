"""The session envelope's operations: the envelope and its working notes.

Each is declared once (``powercontext.operations``): its view, route, OpenAPI
entry, MCP tool and authorization row are derived from it. Envelope answers carry
the version as a strong ``ETag``; writes honour ``If-Match`` (412 on a mismatch),
a read ``If-None-Match`` (304), and a write that made the envelope answers 201.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from powercontext.operations import (
    READ_ONLY,
    Context,
    Described,
    Given,
    Header,
    Listing,
    Operation,
    Route,
    Text,
    ToolSpec,
    on_scope,
    writes,
)
from powercontext.pages import Page
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

TAGS = ("session envelopes",)
ETAG = Header(
    "ETag",
    'The envelope version as a strong entity tag, e.g. "12".',
    response=(200, 201, 304),
)
IF_MATCH = Header(
    "If-Match",
    'Write only if the envelope is at this ETag ("12"), or exists (*). '
    "A mismatch, or any If-Match on a missing envelope, is 412.",
)
IF_NONE_MATCH = Header("If-None-Match", "304 (no body) when it names the current ETag.")

# ``session_id`` may contain ``/``: each route captures it greedily up to its
# fixed suffix, and no suffix ends another (urls.py).
_SESSION = r"^scopes/(?P<scope_id>[^/]+)/sessions/(?P<session_id>[\s\S]+)"
ENVELOPE_SEARCH = Route(
    "envelope-search", r"^scopes/(?P<scope_id>[^/]+)/search/envelopes\Z", regex=True
)
ENVELOPE = Route("session-envelope", _SESSION + r"/envelope\Z", regex=True)
NOTES = Route("session-working-notes", _SESSION + r"/working-notes\Z", regex=True)
FOLD = Route(
    "session-working-notes-fold", _SESSION + r"/working-notes/fold\Z", regex=True
)

_NOTES = (
    "The session's working notes are your own findings and decisions for this "
    "session, in your words: never secrets, never instructions copied from "
    "elsewhere. At most 32 KiB of UTF-8 after trimming; longer notes are refused "
    "(422), never truncated."
)
_NOTES_WRITE = writes(destructive=True, idempotent=True)


def _if_match(context: Context) -> IfMatch | None:
    return IfMatch.from_header(context.if_match)


# --- The envelope ---------------------------------------------------------------------


@dataclass(frozen=True)
class EnvelopeRead:
    """An envelope read, and whether the caller's ``If-None-Match`` named it."""

    state: EnvelopeState
    not_modified: bool


def _envelope_get(given: Given, context: Context) -> EnvelopeRead:
    state = selectors.envelope_get(**dict(given.path))
    hit = if_none_match_hits(context.if_none_match, state.version)
    return EnvelopeRead(state, hit)


def _envelope_replace(given: Given, context: Context) -> services.EnvelopeWritten:
    return services.envelope_replace(
        **dict(given.path),
        meta=given.body.meta,
        if_match=_if_match(context),
        principal=context.principal,
        request_id=context.request_id,
    )


def _envelope_overlay(given: Given, context: Context) -> services.EnvelopeWritten:
    return services.envelope_overlay(
        **dict(given.path),
        patch=given.body.meta,
        if_match=_if_match(context),
        principal=context.principal,
        request_id=context.request_id,
    )


def _written_state(written: services.EnvelopeWritten) -> EnvelopeState:
    assert written.state is not None, "envelope writes always leave an envelope"
    return written.state


def _written_etag(written: services.EnvelopeWritten) -> Mapping[str, str]:
    return {"ETag": etag_for(_written_state(written).version)}


def _envelope_write(
    operation_id: str, method: Any, call: Any, tool: ToolSpec | None = None
) -> Operation:
    return Operation(
        operation_id,
        method,
        ENVELOPE,
        on_scope(Role.CONTRIBUTOR),
        call,
        lambda written: envelope_body(_written_state(written)),
        TAGS,
        path=SessionPath,
        body=EnvelopeWrite,
        status=lambda written: 201 if written.created else 200,
        headers=_written_etag,
        answers={200: schemas.Envelope, 201: schemas.Envelope},
        errors=(404, 409, 412),
        documented_headers=(IF_MATCH, ETAG),
        tool=tool,
    )


# --- Working notes --------------------------------------------------------------------


def _notes_get(given: Given, context: Context) -> selectors.WorkingNotesState:
    return selectors.working_notes_get(**dict(given.path))


def _notes_put(given: Given, context: Context) -> services.WorkingNotesWrite:
    capture = given.body.capture
    return services.working_notes_put(
        **dict(given.path),
        notes=given.body.notes,
        capture=None if capture is None else capture.capture(),
        if_match=_if_match(context),
        principal=context.principal,
        request_id=context.request_id,
    )


def _notes_clear(given: Given, context: Context) -> services.WorkingNotesWrite:
    return services.working_notes_clear(
        **dict(given.path),
        if_match=_if_match(context),
        principal=context.principal,
        request_id=context.request_id,
    )


def _fold(given: Given, context: Context) -> str | None:
    return selectors.working_notes_fold(**dict(given.path))


def _envelope_search(given: Given, context: Context) -> Page[Any]:
    return envelope_notes_search(
        scope_id=given.path.scope_id,
        query=given.query.search_query(),
        position=context.position,
        limit=given.query.limit,
    )


def _envelope_search_bound(given: Given) -> tuple[Any, ...]:
    """A search cursor is bound to its scope and query."""
    search = given.query.search_query()
    return (given.path.scope_id, search.match, search.text)


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "search_envelopes",
        "GET",
        ENVELOPE_SEARCH,
        on_scope(Role.VIEWER),
        _envelope_search,
        notes_search_item,
        TAGS,
        path=ScopePath,
        query=EnvelopeSearchQuery,
        listing=Listing("envelope-search", _envelope_search_bound),
        answers={200: schemas.EnvelopeSearchPage},
        errors=(400, 404, 410),
    ),
    Operation(
        "get_session_envelope",
        "GET",
        ENVELOPE,
        on_scope(Role.VIEWER),
        _envelope_get,
        lambda read: None if read.not_modified else envelope_body(read.state),
        TAGS,
        path=SessionPath,
        status=lambda read: 304 if read.not_modified else 200,
        headers=lambda read: {"ETag": etag_for(read.state.version)},
        answers={
            200: schemas.Envelope,
            304: Described("Not modified (If-None-Match)."),
        },
        errors=(404,),
        documented_headers=(IF_NONE_MATCH, ETAG),
        tool=ToolSpec(
            "get_session_envelope",
            "Read a session's envelope: its settings and notes (meta) and its version.",
            READ_ONLY,
        ),
    ),
    _envelope_write("replace_session_envelope", "PUT", _envelope_replace),
    _envelope_write("patch_session_envelope", "PATCH", _envelope_overlay),
    Operation(
        "get_working_notes",
        "GET",
        NOTES,
        on_scope(Role.VIEWER),
        _notes_get,
        working_notes_body,
        TAGS,
        path=SessionPath,
        answers={200: schemas.WorkingNotes},
        errors=(404,),
        tool=ToolSpec(
            "working_notes_get",
            f"Read the session's working notes. {_NOTES}",
            READ_ONLY,
        ),
    ),
    Operation(
        "put_working_notes",
        "PUT",
        NOTES,
        on_scope(Role.CONTRIBUTOR),
        _notes_put,
        working_notes_write_body,
        TAGS,
        path=SessionPath,
        body=WorkingNotesPut,
        status=lambda written: 201 if written.created else 200,
        answers={200: schemas.WorkingNotesWrite, 201: schemas.WorkingNotesWrite},
        errors=(404, 409, 412),
        documented_headers=(IF_MATCH,),
        tool=ToolSpec(
            "working_notes_update",
            "Replace the session's working notes with notes (an empty string "
            "clears them); with capture, also keep them as a Working Note Source "
            f"in the same transaction. {_NOTES}",
            _NOTES_WRITE,
        ),
    ),
    Operation(
        "delete_working_notes",
        "DELETE",
        NOTES,
        on_scope(Role.CONTRIBUTOR),
        _notes_clear,
        lambda written: working_notes_body(written.notes),
        TAGS,
        path=SessionPath,
        answers={200: schemas.WorkingNotes},
        errors=(404, 409, 412),
        documented_headers=(IF_MATCH,),
        tool=ToolSpec(
            "working_notes_clear",
            f"Clear the session's working notes. {_NOTES}",
            _NOTES_WRITE,
        ),
    ),
    Operation(
        "fold_working_notes",
        "GET",
        FOLD,
        on_scope(Role.VIEWER),
        _fold,
        lambda text: None if text is None else Text(text),
        TAGS,
        path=SessionPath,
        status=lambda text: 204 if text is None else 200,
        answers={
            (200, "text/plain"): str,
            204: Described("No notes: nothing to fold."),
        },
        errors=(404,),
        tool=ToolSpec(
            "fold_working_notes",
            "The session's working notes as the text block a host folds into a "
            "prompt; empty when there are none. The block is agent-written and "
            "unverified.",
            READ_ONLY,
        ),
    ),
)
