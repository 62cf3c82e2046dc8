"""Request models of the evidence and handoff operations: shape and field rules.

One strict model per operation (``powercontext.inputs``). The handoff values they
carry - drafts, prepared handoffs, citations - are the domain's own typed models
(``content.py``, ``citations.py``), validated here once and handed to the services
as they are. The rules between fields (a selection and the value it needs, a
handoff naming the request's scope) are ``cross_field_errors``; everything else
(scope existence, evidence, the base, generation provenance) is the services'.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from powercontext import limits
from powercontext.inputs import Identity, Loc, SourceId, StrictInput, unique_items
from sources.inputs import SourceType

from .citations import ArtifactReference, CitedSource, HandoffCitation
from .content import HandoffDraft, HandoffText, PreparedHandoff, Selection
from .references import Purpose, SourceRef

ContentDigest = Annotated[
    str, StringConstraints(min_length=1, pattern=r"^sha256:[0-9a-f]{64}$")
]
RolloverReason = Literal[
    "user_requested",
    "host_context_budget",
    "host_compaction",
    "context_quality",
    "delegation",
    "manual_checkpoint",
]
# The hint's UTF-8 budget: the reference's default and largest (all or nothing).
HINT_MAX_BYTES_DEFAULT = 2000
HINT_MAX_BYTES_LIMIT = 4000
# The reference's budget of a generated draft (unused here: nothing is generated).
GENERATION_MAX_BYTES_DEFAULT = 8000
GENERATION_MAX_BYTES = (512, 32768)


# --- Evidence -------------------------------------------------------------------------


class EvidenceRef(StrictInput):
    """One Source identity to resolve, optionally pinned to its content digest."""

    name: SourceType
    source_id: SourceId
    content_digest: ContentDigest | None = None

    def source_ref(self) -> SourceRef:
        return SourceRef(self.name, self.source_id, self.content_digest)


class EvidenceResolve(StrictInput):
    """Resolve 1..256 refs for a purpose."""

    purpose: Annotated[Purpose, Field(strict=False)]  # its string values
    refs: list[EvidenceRef] = Field(min_length=1, max_length=limits.EVIDENCE_REFS_MAX)

    def source_refs(self) -> list[SourceRef]:
        return [ref.source_ref() for ref in self.refs]


# --- Finalize and commit --------------------------------------------------------------


class ScopedRequest(StrictInput):
    # A handoff operation names its scope in the body (authorized on it). A
    # comment, not a docstring: the OpenAPI document would show it on each.

    scope_id: Identity


def _scope_mismatch(field: str) -> tuple[Loc, str, str]:
    return ((field, "scope_id"), "scope_mismatch", "Must equal the request's scope_id.")


class FinalizeHandoff(ScopedRequest):
    """Check a draft's evidence and prepare it for commit."""

    draft: HandoffDraft


class CommitHandoff(ScopedRequest):
    """Store a prepared handoff of ``scope_id`` as its next revision."""

    handoff: PreparedHandoff

    def cross_field_errors(self) -> Iterable[tuple[Loc, str, str]]:
        if self.handoff.scope_id != self.scope_id:
            yield _scope_mismatch("handoff")


# --- Continue and hint ----------------------------------------------------------------


class ContinueHandoff(ScopedRequest):
    """A selection and exactly the value it needs: ``prepared`` for ``prepared``,
    ``revision`` for ``exact``, neither for ``latest`` (null counts as absent)."""

    selection: Selection
    prepared: PreparedHandoff | None = None
    revision: ArtifactReference | None = None

    def cross_field_errors(self) -> Iterable[tuple[Loc, str, str]]:
        problems = list(self._selection_problems())
        if problems:
            return problems
        if self.prepared is not None and self.prepared.scope_id != self.scope_id:
            return [_scope_mismatch("prepared")]
        return []

    def _selection_problems(self) -> Iterable[tuple[Loc, str, str]]:
        needed = {"prepared": "prepared", "exact": "revision"}.get(self.selection)
        for name in ("prepared", "revision"):
            given = getattr(self, name) is not None
            if name == needed and not given:
                message = f"Required for selection '{self.selection}'."
            elif name != needed and given:
                message = f"Must be null or absent for selection '{self.selection}'."
            else:
                continue
            yield (name,), "selection_mismatch", message


class PrepareHandoffHint(ContinueHandoff):
    """A selection as for continue, and the hint's UTF-8 budget (all or nothing)."""

    max_bytes: int = Field(
        default=HINT_MAX_BYTES_DEFAULT, ge=1, le=HINT_MAX_BYTES_LIMIT
    )


# --- Generation (always 503 here) -----------------------------------------------------


class _GenerationRequest(ScopedRequest):
    # The shared fields of the two model-backed operations.

    objective: HandoffText
    rollover_reasons: list[RolloverReason] = Field(
        default_factory=list, max_length=limits.HANDOFF_ROLLOVER_REASONS_MAX
    )
    max_bytes: int = Field(
        default=GENERATION_MAX_BYTES_DEFAULT,
        ge=GENERATION_MAX_BYTES[0],
        le=GENERATION_MAX_BYTES[1],
    )

    def cross_field_errors(self) -> Iterable[tuple[Loc, str, str]]:
        return unique_items("rollover_reasons", self.rollover_reasons)


class PrepareHandoff(_GenerationRequest):
    """Generate a draft from evidence (needs a model: always 503 here)."""

    evidence: list[HandoffCitation] = Field(
        min_length=1, max_length=limits.HANDOFF_EVIDENCE_MAX
    )


class ActivateHandoff(_GenerationRequest):
    """Generate a draft at a boundary Source (needs a model: always 503 here)."""

    boundary_source: CitedSource
    evidence: list[HandoffCitation] = Field(
        default_factory=list, max_length=limits.HANDOFF_EVIDENCE_MAX
    )
