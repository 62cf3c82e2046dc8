"""Evidence and handoff operations, each declared once (``powercontext.operations``).

Order of checks (api.md 1): authentication (401), the body's shape (422),
authorization on the scope the body or path names (403, also for an unknown
scope), then the call, which raises 404/409/422/503 domain errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils import timezone

from powercontext.operations import (
    READ_ONLY,
    Context,
    Described,
    Given,
    Operation,
    Route,
    ToolSpec,
    on_scope,
    writes,
)
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
)
from .renderers import (
    committed_body,
    evidence_resolution_body,
    prepared_body,
    prepared_context_body,
    resolution_body,
)
from .selectors import handoff_select

EVIDENCE, HANDOFF = ("evidence",), ("handoff",)
GENERATION_UNAVAILABLE = Described(
    "`handoff_generation_unavailable`: this service has no language model "
    "(always, after the checks above). Also `unavailable` when the "
    "database cannot be reached.",
    error=True,
)


def _evidence_resolve(given: Given, context: Context) -> Any:
    return evidence_resolve(
        scope_id=given.path.scope_id,
        purpose=given.body.purpose,
        refs=given.body.source_refs(),
    )


def _finalize(given: Given, context: Context) -> Any:
    return services.handoff_finalize(
        scope_id=given.body.scope_id, draft=given.body.draft
    )


def _commit(given: Given, context: Context) -> Any:
    return services.handoff_commit(
        principal=context.principal,
        scope_id=given.body.scope_id,
        handoff=given.body.handoff,
        request_id=context.request_id,
    )


def _replayed(committed: Any) -> Mapping[str, str]:
    return {} if committed.created else {"Idempotent-Replayed": "true"}


def _continue(given: Given, context: Context) -> Any:
    data = given.body
    return handoff_select(
        scope_id=data.scope_id,
        selection=data.selection,
        prepared=data.prepared,
        revision=data.revision,
        now=timezone.now(),
    )


def _hint(given: Given, context: Context) -> str | None:
    data = given.body
    return handoff_hint(
        scope_id=data.scope_id,
        selection=data.selection,
        prepared=data.prepared,
        revision=data.revision,
        max_bytes=data.max_bytes,
    )


def _prepare(given: Given, context: Context) -> None:
    services.handoff_prepare(scope_id=given.body.scope_id)


def _activate(given: Given, context: Context) -> None:
    services.handoff_activate(
        scope_id=given.body.scope_id, boundary_source=given.body.boundary_source
    )


def _no_body(nothing: None) -> None:
    return nothing


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "resolve_evidence",
        "POST",
        Route("evidence-resolve", "scopes/<str:scope_id>/evidence/resolve"),
        on_scope(Role.VIEWER),
        _evidence_resolve,
        evidence_resolution_body,
        EVIDENCE,
        path=ScopePath,
        body=EvidenceResolve,
        answers={200: schemas.EvidenceResolution},
        errors=(404,),
        tool=ToolSpec(
            "resolve_evidence",
            "Resolve exact Source references for a purpose: each one resolves to "
            "exactly the cited bytes, or is reported unavailable (missing, "
            "expired, digest mismatch) - never to other content.",
            READ_ONLY,
        ),
    ),
    Operation(
        "finalize_handoff",
        "POST",
        Route("handoff-finalize", "handoff/finalize"),
        on_scope(Role.CONTRIBUTOR, scope_from="body"),
        _finalize,
        prepared_body,
        HANDOFF,
        body=FinalizeHandoff,
        answers={200: PreparedHandoff},
        errors=(404,),
        tool=ToolSpec(
            "finalize_handoff",
            "Turn an inspected handoff draft into a prepared handoff (a temporary "
            "transfer value). Pass the draft itself; keep the whole returned "
            "value. Finalizing commits nothing and executes nothing.",
        ),
    ),
    Operation(
        "commit_handoff",
        "POST",
        Route("handoff-commit", "handoff/commit"),
        on_scope(Role.CONTRIBUTOR, scope_from="body"),
        _commit,
        committed_body,
        HANDOFF,
        body=CommitHandoff,
        headers=_replayed,
        answers={200: schemas.CommittedHandoff},
        errors=(404, 409),
        tool=ToolSpec(
            "commit_handoff",
            "Commit a prepared handoff as a durable revision, only when the user "
            "asks for a durable milestone. Pass the exact prepared value; the same "
            "value again returns the same revision. Report it committed only once "
            "a revision is returned.",
            writes(destructive=False, idempotent=True),
        ),
    ),
    Operation(
        "continue_handoff",
        "POST",
        Route("handoff-continue", "handoff/continue"),
        on_scope(Role.VIEWER, scope_from="body"),
        _continue,
        resolution_body,
        HANDOFF,
        body=ContinueHandoff,
        answers={200: schemas.HandoffResolution},
        errors=(404,),
        tool=ToolSpec(
            "continue_handoff",
            "Read a handoff to continue transferred work: the prepared value you "
            "were given, an exact revision, or the latest of the Scope. Check its "
            "claims against the current code and instructions before acting on "
            "them.",
            READ_ONLY,
        ),
    ),
    Operation(
        "prepare_handoff_hint",
        "POST",
        Route("handoff-hint", "handoff/hint"),
        on_scope(Role.VIEWER, scope_from="body"),
        _hint,
        prepared_context_body,
        HANDOFF,
        body=PrepareHandoffHint,
        answers={200: schemas.PreparedContext},
        errors=(404,),
        tool=ToolSpec(
            "prepare_handoff_hint",
            "A short, bounded orientation text (at most max_bytes) for a fresh "
            "session, from a selected handoff and the references it cites. A hint "
            "never replaces reading the handoff and checking its evidence.",
            READ_ONLY,
        ),
    ),
    Operation(
        "prepare_handoff",
        "POST",
        Route("handoff-prepare", "handoff/prepare"),
        on_scope(Role.CONTRIBUTOR, scope_from="body"),
        _prepare,
        _no_body,
        HANDOFF,
        body=PrepareHandoff,
        answers={503: GENERATION_UNAVAILABLE},
        errors=(404,),
        tool=ToolSpec(
            "prepare_handoff",
            "Generate a handoff draft from cited evidence. This service has no "
            "language model: after the checks, the answer is always "
            "handoff_generation_unavailable; write the draft yourself and "
            "finalize it.",
        ),
    ),
    Operation(
        "activate_handoff",
        "POST",
        Route("handoff-activate", "handoff/activate"),
        on_scope(Role.CONTRIBUTOR, scope_from="body"),
        _activate,
        _no_body,
        HANDOFF,
        body=ActivateHandoff,
        answers={503: GENERATION_UNAVAILABLE},
        errors=(404,),
        tool=ToolSpec(
            "activate_handoff",
            "Start a handoff from a boundary Source and an objective. This service "
            "has no language model: after the checks, the answer is always "
            "handoff_generation_unavailable; write the draft yourself and "
            "finalize it.",
        ),
    ),
)
