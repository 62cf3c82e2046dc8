"""Handoff values as typed objects: drafts, contents, statements, omissions.

These pydantic models are the domain's types - the services, selectors, the hint
and the evidence checks read them by attribute - and the same models validate the
request bodies that carry them (``inputs.py``). They follow the reference's models
(``HandoffDraft``, ``PreparedHandoff``, ``HandoffContent``...): the same keys, the
same required-but-nullable keys (``next_action``, ``base``, an omission's
``citation``), the same limits (``powercontext.limits``). What they cite is in
``citations.py``.

A revision stores its content as the RFC 8785 canonical JSON of ``wire()``
(``content_text``); two contents are equal for commit idempotency exactly when
their canonical digests are (``content_digest``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from powercontext import limits
from powercontext.canonical import canonical_json, canonical_sha256
from powercontext.exceptions import InvalidRequest
from powercontext.inputs import NOT_BLANK, Identity
from powercontext.jsonvalues import stored_json_loads

from .citations import (
    ArtifactReference,
    CitedSource,
    HandoffBase,
    HandoffCitation,
    HandoffValue,
    RefToken,
    Revision,
    cited_artifacts,
    cited_sources,
)

HandoffSchema = Literal["powercontext.handoff.v1"]
PreparedSchema = Literal["powercontext.prepared-handoff.v1"]
HANDOFF_SCHEMA: HandoffSchema = "powercontext.handoff.v1"
PREPARED_SCHEMA: PreparedSchema = "powercontext.prepared-handoff.v1"

# Caller-written handoff text: 1..8192 characters, not blank.
HandoffText = Annotated[
    str,
    StringConstraints(min_length=1, max_length=limits.HANDOFF_TEXT_MAX_LENGTH),
    NOT_BLANK,
]
Disposition = Literal["continuable", "blocked", "complete"]
# Which revision a continuity hint describes (the hint operation's ``selection``).
Selection = Literal["prepared", "exact", "latest"]
Version = Annotated[str, StringConstraints(min_length=1, max_length=256)]
HexDigest = Annotated[str, StringConstraints(min_length=1, pattern=r"^[0-9a-f]{64}$")]


class HandoffStatement(HandoffValue):
    """A claim and the 1..32 citations that support it."""

    text: HandoffText
    citations: list[HandoffCitation] = Field(
        min_length=1, max_length=limits.HANDOFF_CITATIONS_MAX
    )


class HandoffOmission(HandoffValue):
    """Something the handoff knowingly leaves out; ``citation`` may be null."""

    text: HandoffText
    citation: HandoffCitation | None  # the key is required, null allowed


# --- Generation provenance (never issued by this service) -----------------------------


class HandoffGenerationEnvelope(HandoffValue):
    """A generation receipt (issued by a generating server; never by this one)."""

    receipt: Annotated[
        str,
        StringConstraints(min_length=1, max_length=limits.HANDOFF_TEXT_MAX_LENGTH),
    ]


class GenerationArtifact(HandoffValue):
    """Any artifact reference (inside generation metadata from another server)."""

    family: RefToken
    artifact_id: RefToken
    revision: Revision


class HandoffGenerationMetadata(HandoffValue):
    """Provenance of a model-generated draft, as another server records it."""

    scope_id: Identity
    prompt_key: Literal["handoff.generate"]
    selection: Literal["built_in", "artifact"]
    artifact: GenerationArtifact | None  # the key is required, null allowed
    definition_version: Version
    builtin_version: Version
    compiled_digest: HexDigest
    original_draft_digest: HexDigest
    edit_status: Literal["unchanged", "edited"]


# --- Drafts, contents, prepared handoffs ----------------------------------------------


@dataclass(frozen=True)
class Claim:
    """A statement whose evidence is checked: ``state[state_index]`` or the next
    action (``state_index`` None)."""

    claim: Literal["state", "next_action"]
    state_index: int | None
    citations: list[HandoffCitation]


class HandoffDraft(HandoffValue):
    """A caller-written handoff to finalize."""

    generation: HandoffGenerationEnvelope | None = None
    objective: HandoffText
    state: list[HandoffStatement] = Field(
        min_length=1, max_length=limits.HANDOFF_STATE_MAX
    )
    disposition: Disposition
    next_action: HandoffStatement | None  # the key is required, null allowed
    omissions: list[HandoffOmission] = Field(max_length=limits.HANDOFF_OMISSIONS_MAX)

    def content(self) -> HandoffContent:
        """The content this draft finalizes to: its statements, no generation."""
        return HandoffContent(
            generation=None,
            schema=HANDOFF_SCHEMA,
            objective=self.objective,
            state=self.state,
            disposition=self.disposition,
            next_action=self.next_action,
            omissions=self.omissions,
        )


class HandoffContent(HandoffValue):
    """The content of a handoff: a finalized draft, what a revision stores.

    ``generation`` is kept when present (a prepared value may carry metadata from
    a generating server); commit refuses it.
    """

    generation: HandoffGenerationMetadata | None = None
    schema_: HandoffSchema = Field(alias="schema")
    objective: HandoffText
    state: list[HandoffStatement] = Field(
        min_length=1, max_length=limits.HANDOFF_STATE_MAX
    )
    disposition: Disposition
    next_action: HandoffStatement | None  # the key is required, null allowed
    omissions: list[HandoffOmission] = Field(max_length=limits.HANDOFF_OMISSIONS_MAX)

    def claims(self) -> list[Claim]:
        """The state statements in order, then the next action when there is one.

        Omissions are not claims: finalize, commit and continue never check them.
        """
        claims = [
            Claim("state", index, statement.citations)
            for index, statement in enumerate(self.state)
        ]
        if self.next_action is not None:
            claims.append(Claim("next_action", None, self.next_action.citations))
        return claims

    def claim_citations(self) -> list[HandoffCitation]:
        """Every citation of the claims, in order (duplicates kept)."""
        return [c for claim in self.claims() for c in claim.citations]

    def omission_citations(self) -> list[HandoffCitation]:
        return [o.citation for o in self.omissions if o.citation is not None]

    def source_refs(self) -> list[CitedSource]:
        """Distinct Source refs of the claims, first seen first."""
        return cited_sources(self.claim_citations())

    def artifact_refs(self) -> list[ArtifactReference]:
        """Distinct artifact refs of the claims, first seen first."""
        return cited_artifacts(self.claim_citations())


class PreparedHandoff(HandoffValue):
    """A finalized handoff of one scope and the revision it was finalized against."""

    generation: HandoffGenerationEnvelope | None = None
    schema_: PreparedSchema = Field(alias="schema")
    scope_id: Identity
    base: HandoffBase | None  # the key is required, null allowed
    content: HandoffContent


def content_text(content: HandoffContent) -> str:
    """The stored form of a content: the RFC 8785 canonical JSON of its wire value."""
    return canonical_json(content.wire()).decode("utf-8")


def content_size_require(content: HandoffContent, *, field: str) -> None:
    """Refuse a content whose canonical JSON passes ``POWERCONTEXT_MAX_SOURCE_BYTES``.

    A handoff is held to the cap of one Source, so that every answer carrying it
    (finalize, commit, continue: the content and at most one check per claim)
    stays within the response budget (docs/api.md; the settings keep that
    budget at least four such contents).
    """
    size = len(canonical_json(content.wire()))
    max_bytes = limits.max_source_bytes()
    if size > max_bytes:
        raise InvalidRequest.for_field(
            field,
            "too_large",
            f"The handoff's content is {size} bytes as canonical JSON; the limit is "
            f"{max_bytes}. Keep statements short and cite Sources for the detail.",
            bytes=size,
            max_bytes=max_bytes,
        )


def content_digest(content: HandoffContent) -> str:
    """``sha256:`` + hex SHA-256 of the canonical JSON of a content's wire value.

    Two contents are equal for commit idempotency exactly when their digests are.
    """
    return "sha256:" + canonical_sha256(content.wire())


def stored_content(text: str) -> HandoffContent:
    """A content read back from its stored canonical JSON (``content_text``)."""
    return HandoffContent.model_validate(stored_json_loads(text))
