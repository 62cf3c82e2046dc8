"""What a handoff cites: Source identities and revisions of handoff artifacts.

Typed, frozen values (pydantic models validated by the same strict rules as the
requests that carry them): a citation is a union discriminated by ``kind``, and
its validation errors carry the tag in their ``loc``
(``[..., "citations", 0, "source", "source_ref", "name"]``), as the reference's
do. Citations compare and hash by value, so "the same citation twice" is plain
equality. Where we are stricter than the reference, it is on purpose: an
artifact's ``family`` must be ``handoff`` (the only artifact family this service
holds), and Source ids follow our identity rules (1..256 characters, not blank,
no padding).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints
from typing_extensions import TypeAliasType

from powercontext.inputs import SourceId, StrictInput

ArtifactFamily = Literal["handoff"]
ArtifactId = Literal["handoff"]
# One handoff artifact per scope: the family and id are always these.
ARTIFACT_FAMILY: ArtifactFamily = "handoff"
ARTIFACT_ID: ArtifactId = "handoff"
REF_TOKEN_MAX_LENGTH = 128

# An artifact token: 1..128 printable ASCII characters, no spaces.
RefToken = Annotated[
    str,
    StringConstraints(
        min_length=1, max_length=REF_TOKEN_MAX_LENGTH, pattern=r"^[\x21-\x7e]+$"
    ),
]
Revision = Annotated[int, Field(ge=1)]


class HandoffValue(StrictInput):
    """A handoff value: strict, frozen, and rendered by ``wire()``.

    Fields are declared in the reference's wire order, so ``wire()`` is the JSON
    object the value is stored and answered as, byte-identically every time.
    """

    def wire(self) -> dict[str, Any]:
        """The JSON object of this value, keys in the reference's order."""
        return self.model_dump(by_alias=True)


class CitedSource(HandoffValue):
    """A SourceReference as cited by a handoff: ``name`` is the source type."""

    name: SourceId
    source_id: SourceId


class ArtifactReference(HandoffValue):
    """A reference to a revision of a handoff artifact (the only family we hold)."""

    family: ArtifactFamily
    artifact_id: RefToken
    revision: Revision


class HandoffBase(HandoffValue):
    """The revision a PreparedHandoff was finalized against: always this scope's
    one handoff artifact."""

    family: ArtifactFamily
    artifact_id: ArtifactId
    revision: Revision


class HandoffSourceCitation(HandoffValue):
    """A citation of one Source identity (no digest: Sources never change)."""

    kind: Literal["source"]
    source_ref: CitedSource


class HandoffArtifactCitation(HandoffValue):
    """A citation of a revision of this scope's handoff."""

    kind: Literal["artifact"]
    artifact_ref: ArtifactReference


# A named alias, so the OpenAPI document has one ``HandoffCitation`` component.
HandoffCitation = TypeAliasType(
    "HandoffCitation",
    Annotated[
        HandoffSourceCitation | HandoffArtifactCitation, Field(discriminator="kind")
    ],
)


def revision_ref(number: int) -> ArtifactReference:
    """The reference of revision ``number`` of a scope's handoff."""
    return ArtifactReference(
        family=ARTIFACT_FAMILY, artifact_id=ARTIFACT_ID, revision=number
    )


def handoff_base(number: int) -> HandoffBase:
    """The base of a handoff finalized while revision ``number`` is the head."""
    return HandoffBase(family=ARTIFACT_FAMILY, artifact_id=ARTIFACT_ID, revision=number)


def distinct(citations: Iterable[HandoffCitation]) -> list[HandoffCitation]:
    """``citations`` without repeats, first occurrence first."""
    return list(dict.fromkeys(citations))


def cited_sources(citations: Iterable[HandoffCitation]) -> list[CitedSource]:
    """The distinct Source refs among ``citations``, first seen first."""
    return [
        citation.source_ref
        for citation in distinct(citations)
        if isinstance(citation, HandoffSourceCitation)
    ]


def cited_artifacts(citations: Iterable[HandoffCitation]) -> list[ArtifactReference]:
    """The distinct artifact refs among ``citations``, first seen first."""
    return [
        citation.artifact_ref
        for citation in distinct(citations)
        if isinstance(citation, HandoffArtifactCitation)
    ]
