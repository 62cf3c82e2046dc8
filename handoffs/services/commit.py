"""The one writer of handoff revisions.

``handoff_commit`` runs one durable transaction that locks the scope's handoff
head, decides idempotency, the base and the evidence in that order, and writes
the revision with its statements, citations and lineage.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from powercontext.principals import Principal
from sources.selectors import scope_require

from ..citations import HandoffArtifactCitation, HandoffCitation, HandoffSourceCitation
from ..content import (
    HandoffContent,
    PreparedHandoff,
    content_digest,
    content_size_require,
    content_text,
)
from ..exceptions import InvalidHandoffGeneration, RevisionConflict
from ..models import (
    CitationKind,
    HandoffHead,
    HandoffLineage,
    HandoffRevision,
    StatementClaim,
)
from ..models import HandoffCitation as CitationRow
from ..models import HandoffStatement as StatementRow
from ..selectors import CitationCheck, claim_evidence_require, revision_content


@dataclass(frozen=True)
class CommittedRevision:
    """The revision a commit answers with; ``created`` is False for a replay."""

    revision: HandoffRevision
    created: bool

    @property
    def content(self) -> HandoffContent:
        """The content as stored (a replay answers exactly what was stored)."""
        return revision_content(self.revision)


def handoff_commit(
    *,
    principal: Principal,
    scope_id: str,
    handoff: PreparedHandoff,
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
    if handoff.generation is not None or handoff.content.generation is not None:
        raise InvalidHandoffGeneration()
    content = handoff.content
    content_size_require(content, field="handoff")
    digest = content_digest(content)
    base = None if handoff.base is None else handoff.base.revision
    now = timezone.now()
    with transaction.atomic(durable=True):
        head = handoff_head_lock(scope_id=scope_id)
        current = head.current
        if current is not None and current.content_digest == digest:
            return CommittedRevision(current, created=False)
        expected = None if current is None else current.revision
        if base != expected:
            raise RevisionConflict()
        check = claim_evidence_require(scope_id=scope_id, content=content, now=now)
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
    content: HandoffContent,
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
        objective=content.objective,
        disposition=content.disposition,
        created_at=now,
        created_by=created_by,
        request_id=request_id,
    )
    _statements_insert(revision, content)
    HandoffLineage.objects.bulk_create(
        HandoffLineage(
            revision=revision,
            source_id=check.source_pks[(ref.name, ref.source_id)],
            ordinal=ordinal,
        )
        for ordinal, ref in enumerate(content.source_refs())
    )
    return revision


def handoff_head_lock(*, scope_id: str) -> HandoffHead:
    """Lock the scope's handoff head (``FOR UPDATE``), creating it if needed, and
    read its current revision after the lock is held.

    Must run inside a transaction. This is the lock that serialises writes which
    pin Sources (commit writes lineage while holding it) with writes that must
    respect pins: a purge or redaction that takes it before looking at lineage
    cannot race a commit into pinning a Source it is about to remove. The insert
    ignores a conflict, so concurrent first commits meet on the one row (on
    PostgreSQL the second waits for the first's insert to commit).

    The current revision is read by a statement of its own: joined into the
    locking query, a commit that waited for the lock would see the head's new
    ``current_id`` but the revision row of its own, older snapshot - none at all
    on PostgreSQL, so a stale commit passed the base check and met the revision
    number's unique constraint as a 500
    (docs/decisions/0025-handoff-head-read-after-lock.md).
    """
    HandoffHead.objects.bulk_create(
        [HandoffHead(scope_id=scope_id)], ignore_conflicts=True
    )
    head = HandoffHead.objects.select_for_update().get(scope_id=scope_id)
    if head.current_id is not None:
        head.current = HandoffRevision.objects.get(pk=head.current_id)
    return head


def _statements_insert(revision: HandoffRevision, content: HandoffContent) -> None:
    """Write the state, next action and omissions of ``revision`` with citations."""
    rows: list[tuple[StatementRow, list[HandoffCitation]]] = [
        (_statement_row(revision, StatementClaim.STATE, index, s.text), s.citations)
        for index, s in enumerate(content.state)
    ]
    if content.next_action is not None:
        next_action = content.next_action
        rows.append(
            (
                _statement_row(
                    revision, StatementClaim.NEXT_ACTION, 0, next_action.text
                ),
                next_action.citations,
            )
        )
    rows.extend(
        (
            _statement_row(revision, StatementClaim.OMISSION, index, omission.text),
            [] if omission.citation is None else [omission.citation],
        )
        for index, omission in enumerate(content.omissions)
    )
    statements = StatementRow.objects.bulk_create([row for row, _ in rows])
    CitationRow.objects.bulk_create(
        _citation_row(statement, ordinal, citation)
        for statement, (_, citations) in zip(statements, rows, strict=True)
        for ordinal, citation in enumerate(citations)
    )


def _statement_row(
    revision: HandoffRevision, claim: StatementClaim, ordinal: int, text: str
) -> StatementRow:
    return StatementRow(revision=revision, claim=claim, ordinal=ordinal, text=text)


def _citation_row(
    statement: StatementRow, ordinal: int, citation: HandoffCitation
) -> CitationRow:
    if isinstance(citation, HandoffSourceCitation):
        return CitationRow(
            statement=statement,
            ordinal=ordinal,
            kind=CitationKind.SOURCE,
            source_type=citation.source_ref.name,
            source_id=citation.source_ref.source_id,
        )
    assert isinstance(citation, HandoffArtifactCitation)
    ref = citation.artifact_ref
    return CitationRow(
        statement=statement,
        ordinal=ordinal,
        kind=CitationKind.ARTIFACT,
        artifact_family=ref.family,
        artifact_id=ref.artifact_id,
        artifact_revision=ref.revision,
    )
