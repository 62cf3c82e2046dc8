"""The handoff operations that produce or store a handoff.

``handoff_finalize`` writes nothing: it checks a caller-written draft and returns
the PreparedHandoff to commit. ``handoff_commit`` is the one writer of handoff
revisions: one durable transaction that locks the scope's handoff head, decides
idempotency, the base and the evidence in that order, and writes the revision with
its statements, citations and lineage. ``handoff_prepare`` and ``handoff_activate``
need a language model to write a draft; this service has none, so after their
checks they always raise ``HandoffGenerationUnavailable`` (503), as the reference
does without a model.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, NoReturn

from django.db import transaction
from django.utils import timezone

from powercontext.principals import Principal
from sources.selectors import scope_require

from .content import (
    PREPARED_SCHEMA,
    Citation,
    citation_value,
    claim_citations,
    content_digest,
    content_text,
    content_value,
    revision_ref,
    source_refs_of,
)
from .evidence import Purpose, SourceRef, evidence_resolve
from .exceptions import (
    HandoffEvidenceNotFound,
    HandoffGenerationUnavailable,
    InvalidHandoffGeneration,
    RevisionConflict,
)
from .models import (
    CitationKind,
    HandoffCitation,
    HandoffHead,
    HandoffLineage,
    HandoffRevision,
    HandoffStatement,
    StatementClaim,
)
from .selectors import CitationCheck, citations_check, current_revision_get


def handoff_finalize(*, scope_id: str, draft: dict[str, Any]) -> dict[str, Any]:
    """Check a caller-written draft and return the PreparedHandoff to commit.

    Every citation of the state and the next action must resolve for purpose
    ``handoff`` now (omissions are not checked). ``base`` is the head revision at
    this moment (None before the first commit): commit refuses the handoff if the
    head moves in between.

    Raises ``ScopeNotFound``; ``InvalidHandoffGeneration`` for a generation
    receipt (this service never issues one); ``HandoffEvidenceNotFound`` listing
    the distinct citations that do not resolve (missing and expired alike).
    Writes nothing, takes no locks; at most four queries.
    """
    current = current_revision_get(scope_id=scope_id)
    if draft.get("generation") is not None:
        raise InvalidHandoffGeneration()
    content = content_value({**draft, "generation": None})
    _require_evidence(scope_id, content, timezone.now())
    return {
        "generation": None,
        "schema": PREPARED_SCHEMA,
        "scope_id": scope_id,
        "base": None if current is None else revision_ref(current.revision),
        "content": content,
    }


def handoff_prepare(*, scope_id: str) -> NoReturn:
    """Generate a draft: impossible without a model.

    Raises ``ScopeNotFound``, else always ``HandoffGenerationUnavailable`` (the
    evidence is not looked at: generation availability comes first).
    """
    scope_require(scope_id=scope_id)
    raise HandoffGenerationUnavailable()


def handoff_activate(*, scope_id: str, boundary_source: dict[str, Any]) -> NoReturn:
    """Start generation at a boundary Source: impossible without a model.

    The boundary is resolved first (purpose ``handoff``), as in the reference:
    raises ``ScopeNotFound``, ``HandoffEvidenceNotFound`` when the boundary does
    not resolve, else always ``HandoffGenerationUnavailable``. One query.
    """
    ref = SourceRef(boundary_source["name"], boundary_source["source_id"])
    (item,) = evidence_resolve(
        scope_id=scope_id, purpose=Purpose.HANDOFF, refs=[ref], include_content=False
    ).items
    if not item.available:
        raise HandoffEvidenceNotFound()
    raise HandoffGenerationUnavailable()


@dataclass(frozen=True)
class CommittedRevision:
    """The revision a commit answers with; ``created`` is False for a replay."""

    revision: HandoffRevision
    created: bool


def handoff_commit(
    *,
    principal: Principal,
    scope_id: str,
    handoff: dict[str, Any],
    request_id: str,
) -> CommittedRevision:
    """Store ``handoff`` (a PreparedHandoff of this scope) as the next revision.

    In one durable transaction holding the lock on the scope's handoff head:

    1. content equal to the head's (same canonical digest) returns the head
       unchanged - idempotent, whatever the base and even if its evidence has
       expired since;
    2. a ``base`` other than the head (stale, future, or null once a revision
       exists) raises ``RevisionConflict`` - before any evidence is looked at;
    3. a citation of the state or next action that does not resolve raises
       ``HandoffEvidenceNotFound``;
    4. otherwise revision head+1 is written with its statements, citations and a
       lineage row pinning every cited Source, and the head moves to it.

    Also raises ``ScopeNotFound`` and ``InvalidHandoffGeneration`` (a generation
    receipt or generation metadata: this service generates nothing). Content
    equal to an older, non-head revision makes a new revision.
    """
    scope_require(scope_id=scope_id)
    if handoff.get("generation") is not None or (
        handoff["content"].get("generation") is not None
    ):
        raise InvalidHandoffGeneration()
    content = content_value(handoff["content"])
    digest = content_digest(content)
    base = handoff["base"]
    now = timezone.now()
    with transaction.atomic(durable=True):
        head = handoff_head_lock(scope_id=scope_id)
        current = head.current
        if current is not None and current.content_digest == digest:
            return CommittedRevision(current, created=False)
        expected = None if current is None else current.revision
        if (None if base is None else base["revision"]) != expected:
            raise RevisionConflict()
        check = _require_evidence(scope_id, content, now)
        revision = _revision_insert(
            scope_id=scope_id,
            number=(expected or 0) + 1,
            content=content,
            digest=digest,
            check=check,
            created_by=principal.name,
            request_id=request_id,
            now=now,
        )
        head.current = revision
        head.updated_at = now
        head.save(update_fields=["current", "updated_at"])
    return CommittedRevision(revision, created=True)


def _revision_insert(
    *,
    scope_id: str,
    number: int,
    content: dict[str, Any],
    digest: str,
    check: CitationCheck,
    created_by: str,
    request_id: str,
    now: datetime,
) -> HandoffRevision:
    """Write revision ``number`` with its statements, citations and lineage."""
    revision = HandoffRevision.objects.create(
        scope_id=scope_id,
        revision=number,
        content=content_text(content),
        content_digest=digest,
        objective=content["objective"],
        disposition=content["disposition"],
        created_at=now,
        created_by=created_by,
        request_id=request_id,
    )
    _statements_insert(revision, content)
    HandoffLineage.objects.bulk_create(
        HandoffLineage(
            revision=revision,
            source_id=check.source_pks[(ref["name"], ref["source_id"])],
            ordinal=ordinal,
        )
        for ordinal, ref in enumerate(source_refs_of(content))
    )
    return revision


def _require_evidence(
    scope_id: str, content: dict[str, Any], now: datetime
) -> CitationCheck:
    """Raise ``HandoffEvidenceNotFound`` unless every claim citation resolves."""
    citations = claim_citations(content)
    check = citations_check(scope_id=scope_id, citations=citations, now=now)
    missing = check.missing(citations)
    if missing:
        raise HandoffEvidenceNotFound(
            details={"unavailable_evidence": [citation_value(c) for c in missing]}
        )
    return check


def handoff_head_lock(*, scope_id: str) -> HandoffHead:
    """Lock the scope's handoff head (``FOR UPDATE``), creating it if needed.

    Must run inside a transaction. This is the lock that serialises writes which
    pin Sources (commit writes lineage while holding it) with writes that must
    respect pins: a purge or redaction that takes it before looking at lineage
    cannot race a commit into pinning a Source it is about to remove. The insert
    ignores a conflict, so concurrent first commits meet on the one row (on
    PostgreSQL the second waits for the first's insert to commit).
    """
    HandoffHead.objects.bulk_create(
        [HandoffHead(scope_id=scope_id)], ignore_conflicts=True
    )
    return (
        HandoffHead.objects.select_for_update(of=("self",))
        .select_related("current")
        .get(scope_id=scope_id)
    )


def _statements_insert(revision: HandoffRevision, content: dict[str, Any]) -> None:
    """Write the state, next action and omissions of ``revision`` with citations."""
    rows: list[tuple[HandoffStatement, list[Citation]]] = [
        (
            HandoffStatement(
                revision=revision,
                claim=StatementClaim.STATE,
                ordinal=index,
                text=statement["text"],
            ),
            statement["citations"],
        )
        for index, statement in enumerate(content["state"])
    ]
    if content["next_action"] is not None:
        rows.append(
            (
                HandoffStatement(
                    revision=revision,
                    claim=StatementClaim.NEXT_ACTION,
                    ordinal=0,
                    text=content["next_action"]["text"],
                ),
                content["next_action"]["citations"],
            )
        )
    rows.extend(
        (
            HandoffStatement(
                revision=revision,
                claim=StatementClaim.OMISSION,
                ordinal=index,
                text=omission["text"],
            ),
            [] if omission["citation"] is None else [omission["citation"]],
        )
        for index, omission in enumerate(content["omissions"])
    )
    statements = HandoffStatement.objects.bulk_create([row for row, _ in rows])
    HandoffCitation.objects.bulk_create(
        _citation_row(statement, ordinal, citation)
        for statement, (_, citations) in zip(statements, rows, strict=True)
        for ordinal, citation in enumerate(citations)
    )


def _citation_row(
    statement: HandoffStatement, ordinal: int, citation: Citation
) -> HandoffCitation:
    if citation["kind"] == "source":
        ref = citation["source_ref"]
        return HandoffCitation(
            statement=statement,
            ordinal=ordinal,
            kind=CitationKind.SOURCE,
            source_type=ref["name"],
            source_id=ref["source_id"],
        )
    ref = citation["artifact_ref"]
    return HandoffCitation(
        statement=statement,
        ordinal=ordinal,
        kind=CitationKind.ARTIFACT,
        artifact_family=ref["family"],
        artifact_id=ref["artifact_id"],
        artifact_revision=ref["revision"],
    )
