"""Reads of handoff artifacts and the evidence checks of handoff content.

Every read is filtered by scope. Checking the evidence of a handoff costs a
constant number of queries: one ``evidence_resolve`` for all cited Sources and one
lookup for all cited handoff revisions, whatever the number of citations.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from sources.selectors import scope_require

from .citations import (
    ARTIFACT_ID,
    ArtifactReference,
    HandoffArtifactCitation,
    HandoffCitation,
    HandoffSourceCitation,
    distinct,
)
from .content import (
    Claim,
    HandoffContent,
    PreparedHandoff,
    Selection,
    content_size_require,
    stored_content,
)
from .evidence import evidence_resolve
from .exceptions import ArtifactNotFound, HandoffEvidenceNotFound
from .models import HandoffHead, HandoffRevision
from .references import Purpose, SourceRef


def current_revision_get(*, scope_id: str) -> HandoffRevision | None:
    """The head revision of the scope's handoff, None before the first commit.

    Raises ``ScopeNotFound`` when the scope does not exist (a second query, only
    when the scope has no handoff head).
    """
    head = HandoffHead.objects.filter(scope_id=scope_id).select_related("current")
    found = head.first()
    if found is None:
        scope_require(scope_id=scope_id)
        return None
    return found.current


def revision_get(*, scope_id: str, artifact_id: str, number: int) -> HandoffRevision:
    """Revision ``number`` of the scope's handoff; ``ArtifactNotFound`` otherwise
    (also for an ``artifact_id`` other than the one handoff artifact)."""
    revision = (
        HandoffRevision.objects.filter(scope_id=scope_id, revision=number).first()
        if artifact_id == ARTIFACT_ID
        else None
    )
    if revision is None:
        raise ArtifactNotFound()
    return revision


def revision_content(revision: HandoffRevision) -> HandoffContent:
    """The content ``revision`` stores, read back from its canonical JSON."""
    return stored_content(revision.content)


@dataclass(frozen=True)
class CitationCheck:
    """Which citations do not resolve, and the Source rows of those that do.

    ``source_pks`` maps ``(name, source_id)`` of every resolving Source citation to
    its row's primary key (commit pins them as lineage).
    """

    unavailable: frozenset[HandoffCitation]
    source_pks: dict[tuple[str, str], int] = field(default_factory=dict)

    def missing(self, citations: Iterable[HandoffCitation]) -> list[HandoffCitation]:
        """The distinct citations among ``citations`` that do not resolve."""
        return [c for c in distinct(citations) if c in self.unavailable]


def citations_check(
    *, scope_id: str, citations: Iterable[HandoffCitation], now: datetime
) -> CitationCheck:
    """Resolve every citation in ``scope_id`` for purpose ``handoff`` at ``now``.

    A Source citation resolves as ``evidence_resolve`` says (identity only: handoff
    citations pin no digest). A handoff artifact citation resolves when that
    revision of this scope's handoff exists. At most two queries; none for an
    empty list. Raises ``ScopeNotFound`` if the scope does not exist and some
    Source is cited.
    """
    cited = distinct(citations)
    sources = [c for c in cited if isinstance(c, HandoffSourceCitation)]
    artifacts = [c for c in cited if isinstance(c, HandoffArtifactCitation)]
    unavailable: set[HandoffCitation] = set()
    source_pks: dict[tuple[str, str], int] = {}
    if sources:
        resolution = evidence_resolve(
            scope_id=scope_id,
            purpose=Purpose.HANDOFF,
            refs=[
                SourceRef(c.source_ref.name, c.source_ref.source_id) for c in sources
            ],
            now=now,
            include_content=False,
        )
        for citation, item in zip(sources, resolution.items, strict=True):
            if item.available and item.row is not None:
                source_pks[(item.ref.name, item.ref.source_id)] = item.row["id"]
            else:
                unavailable.add(citation)
    existing = _revisions_existing(scope_id, [c.artifact_ref for c in artifacts])
    unavailable.update(c for c in artifacts if c.artifact_ref not in existing)
    return CitationCheck(frozenset(unavailable), source_pks)


def claim_evidence_require(
    *, scope_id: str, content: HandoffContent, now: datetime
) -> CitationCheck:
    """The check of every claim citation of ``content``, all of which resolve.

    Raises ``HandoffEvidenceNotFound`` listing the distinct claim citations that
    do not resolve (missing and expired alike: deliberately not told apart), and
    ``ScopeNotFound``. At most two queries.
    """
    citations = content.claim_citations()
    check = citations_check(scope_id=scope_id, citations=citations, now=now)
    missing = check.missing(citations)
    if missing:
        raise HandoffEvidenceNotFound(
            details={"unavailable_evidence": [c.wire() for c in missing]}
        )
    return check


def _revisions_existing(
    scope_id: str, refs: list[ArtifactReference]
) -> set[ArtifactReference]:
    """The refs among ``refs`` naming a revision of the scope's handoff (1 query,
    none when no ref names the handoff artifact)."""
    numbers = {ref.revision for ref in refs if ref.artifact_id == ARTIFACT_ID}
    if not numbers:
        return set()
    found = set(
        HandoffRevision.objects.filter(
            scope_id=scope_id, revision__in=sorted(numbers)
        ).values_list("revision", flat=True)
    )
    return {
        ref for ref in refs if ref.artifact_id == ARTIFACT_ID and ref.revision in found
    }


@dataclass(frozen=True)
class ClaimCheck:
    """The evidence check of one claim: the distinct citations that do not resolve."""

    claim: Claim
    unavailable: list[HandoffCitation]

    @property
    def available(self) -> bool:
        return not self.unavailable


@dataclass(frozen=True)
class SelectedHandoff:
    """A handoff chosen by ``latest``, ``exact`` or ``prepared``, with its checks.

    ``content`` is None only for ``latest`` in a scope without a committed
    handoff (status ``empty``). ``omissions_available`` is only computed when asked
    for (the hint refuses on unresolvable omission citations; continue does not
    look at them).
    """

    scope_id: str
    selection: Selection | None
    content: HandoffContent | None
    selected_revision: int | None
    current_revision: int | None
    checks: list[ClaimCheck]
    omissions_available: bool = True

    @property
    def all_available(self) -> bool:
        return self.omissions_available and all(c.available for c in self.checks)


def handoff_select(
    *,
    scope_id: str,
    selection: Selection,
    prepared: PreparedHandoff | None,
    revision: ArtifactReference | None,
    now: datetime,
    check_omissions: bool = False,
) -> SelectedHandoff:
    """Choose the handoff named by ``selection`` and check its evidence at ``now``.

    ``latest``: the head revision (an empty result when none is committed);
    ``exact``: ``revision`` (``ArtifactNotFound`` when it does not exist);
    ``prepared``: the given PreparedHandoff's content, committed or not (a stale
    base is not an error). The request model guarantees the value matching the
    selection is present and belongs to ``scope_id``.

    Raises ``ScopeNotFound``, ``ArtifactNotFound``. Never raises because evidence
    became unavailable: that is what the checks report. Read-only; at most four
    queries.
    """
    current = current_revision_get(scope_id=scope_id)
    selected: int | None = None
    if selection == "prepared":
        assert prepared is not None  # the request model enforces it
        content = prepared.content
        content_size_require(content, field="prepared")
    else:
        chosen = current
        if selection == "exact":
            assert revision is not None  # the request model enforces it
            chosen = revision_get(
                scope_id=scope_id,
                artifact_id=revision.artifact_id,
                number=revision.revision,
            )
        if chosen is None:
            return SelectedHandoff(scope_id, None, None, None, None, [])
        content, selected = revision_content(chosen), chosen.revision
    claims = content.claims()
    extra = content.omission_citations() if check_omissions else []
    check = citations_check(
        scope_id=scope_id, citations=[*content.claim_citations(), *extra], now=now
    )
    return SelectedHandoff(
        scope_id=scope_id,
        selection=selection,
        content=content,
        selected_revision=selected,
        current_revision=None if current is None else current.revision,
        checks=[ClaimCheck(claim, check.missing(claim.citations)) for claim in claims],
        omissions_available=not check.missing(extra),
    )
