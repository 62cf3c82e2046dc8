"""The handoff operations that produce a handoff without storing it.

``handoff_finalize`` writes nothing: it checks a caller-written draft and returns
the PreparedHandoff to commit. ``handoff_prepare`` and ``handoff_activate`` need a
language model to write a draft; this service has none, so after their checks
they always raise ``HandoffGenerationUnavailable`` (503), as the reference does
without a model.
"""

from __future__ import annotations

from typing import NoReturn

from django.utils import timezone

from sources.selectors import scope_require

from ..citations import CitedSource, handoff_base
from ..content import (
    PREPARED_SCHEMA,
    HandoffDraft,
    PreparedHandoff,
    content_size_require,
)
from ..evidence import evidence_resolve
from ..exceptions import (
    HandoffEvidenceNotFound,
    HandoffGenerationUnavailable,
    InvalidHandoffGeneration,
)
from ..references import Purpose, SourceRef
from ..selectors import claim_evidence_require, current_revision_get


def handoff_finalize(*, scope_id: str, draft: HandoffDraft) -> PreparedHandoff:
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
    if draft.generation is not None:
        raise InvalidHandoffGeneration()
    content = draft.content()
    content_size_require(content, field="draft")
    claim_evidence_require(scope_id=scope_id, content=content, now=timezone.now())
    return PreparedHandoff(
        generation=None,
        schema=PREPARED_SCHEMA,
        scope_id=scope_id,
        base=None if current is None else handoff_base(current.revision),
        content=content,
    )


def handoff_prepare(*, scope_id: str) -> NoReturn:
    """Generate a draft: impossible without a model.

    Raises ``ScopeNotFound``, else always ``HandoffGenerationUnavailable`` (the
    evidence is not looked at: generation availability comes first).
    """
    scope_require(scope_id=scope_id)
    raise HandoffGenerationUnavailable()


def handoff_activate(*, scope_id: str, boundary_source: CitedSource) -> NoReturn:
    """Start generation at a boundary Source: impossible without a model.

    The boundary is resolved first (purpose ``handoff``), as in the reference:
    raises ``ScopeNotFound``, ``HandoffEvidenceNotFound`` when the boundary does
    not resolve, else always ``HandoffGenerationUnavailable``. One query.
    """
    ref = SourceRef(boundary_source.name, boundary_source.source_id)
    (item,) = evidence_resolve(
        scope_id=scope_id, purpose=Purpose.HANDOFF, refs=[ref], include_content=False
    ).items
    if not item.available:
        raise HandoffEvidenceNotFound()
    raise HandoffGenerationUnavailable()
