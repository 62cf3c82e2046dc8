"""Input serializers (shape only) and output shapes for evidence and handoffs.

The handoff models mirror the reference's (``HandoffDraft``, ``PreparedHandoff``,
``HandoffContent``...): the same keys, the same required-but-nullable keys
(``next_action``, ``base``, an omission's ``citation``), the same limits. A
citation is a union discriminated by ``kind``; its errors carry the tag in their
``loc`` (``[..., "citations", 0, "source", "source_ref", "name"]``), as the
reference's do. Where we are stricter, it is on purpose: an artifact's ``family``
must be ``handoff`` (the only artifact family this service holds), and Source ids
follow our identity rules (1..256 characters, not blank, no padding).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail, ValidationError

from powercontext.api.validation import (
    IdentityField,
    NotBlankCharField,
    StrictCharField,
    StrictChoiceField,
    StrictIntegerField,
    StrictListField,
    StrictSerializer,
)
from powercontext.text import format_datetime
from sources.renderers import source_record

from .content import (
    ARTIFACT_FAMILY,
    ARTIFACT_ID,
    CONTEXT_SCHEMA,
    HANDOFF_SCHEMA,
    PREPARED_SCHEMA,
    artifact_refs_of,
    revision_ref,
    source_refs_of,
)
from .evidence import MAX_REFS, EvidenceResolution, Purpose, Reason, ResolvedRef
from .hints import DEFAULT_MAX_BYTES, MAX_BYTES_LIMIT
from .models import HandoffDisposition
from .selectors import SelectedHandoff, revision_content
from .services import CommittedRevision

TEXT_MAX_LENGTH = 8192
REF_TOKEN_MAX_LENGTH = 128
SELECTIONS = ("prepared", "exact", "latest")
ROLLOVER_REASONS = (
    "user_requested",
    "host_context_budget",
    "host_compaction",
    "context_quality",
    "delegation",
    "manual_checkpoint",
)
DIGEST_PATTERN = r"^sha256:[0-9a-f]{64}\Z"


# --- Fields ---------------------------------------------------------------------------


class BoundedListField(StrictListField):
    """A JSON array whose length is checked before its items (huge lists fail fast).

    Errors use the reference's list vocabulary: ``too_short`` / ``too_long``.
    """

    def to_internal_value(self, data: Any) -> list[Any]:
        if isinstance(data, list):
            if self.min_length is not None and len(data) < self.min_length:
                raise ValidationError(
                    ErrorDetail(
                        f"List should have at least {self.min_length} item(s), "
                        f"not {len(data)}.",
                        code="too_short",
                    )
                )
            if self.max_length is not None and len(data) > self.max_length:
                raise ValidationError(
                    ErrorDetail(
                        f"List should have at most {self.max_length} items, "
                        f"not {len(data)}.",
                        code="too_long",
                    )
                )
        return super().to_internal_value(data)


class TextField(NotBlankCharField):
    """Caller-written handoff text: 1..8192 characters, not blank."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("min_length", 1)
        kwargs.setdefault("max_length", TEXT_MAX_LENGTH)
        super().__init__(**kwargs)


class RefTokenField(StrictCharField):
    """An artifact token: 1..128 printable ASCII characters, no spaces."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("min_length", 1)
        kwargs.setdefault("max_length", REF_TOKEN_MAX_LENGTH)
        kwargs.setdefault(
            "validators",
            [
                RegexValidator(
                    r"^[\x21-\x7e]+\Z",
                    "Must be printable ASCII without spaces.",
                    code="string_pattern_mismatch",
                )
            ],
        )
        super().__init__(**kwargs)


class DigestField(StrictCharField):
    """A content digest as the registry writes it: ``sha256:`` + 64 lowercase hex."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault(
            "validators",
            [
                RegexValidator(
                    DIGEST_PATTERN,
                    "Must be 'sha256:' followed by 64 lowercase hex digits.",
                    code="string_pattern_mismatch",
                )
            ],
        )
        super().__init__(**kwargs)


# --- References and citations ---------------------------------------------------------


class CitedSourceSerializer(StrictSerializer):
    """A SourceReference as cited by a handoff: ``name`` is the source type."""

    name = IdentityField(reject_padding=True)
    source_id = IdentityField(reject_padding=True)


class ArtifactReferenceSerializer(StrictSerializer):
    """A reference to a revision of a handoff artifact (the only family we hold)."""

    family = StrictChoiceField(choices=[ARTIFACT_FAMILY])
    artifact_id = RefTokenField()
    revision = StrictIntegerField(min_value=1)


class HandoffBaseSerializer(StrictSerializer):
    """The revision a PreparedHandoff was finalized against: always this scope's
    one handoff artifact."""

    family = StrictChoiceField(choices=[ARTIFACT_FAMILY])
    artifact_id = StrictChoiceField(choices=[ARTIFACT_ID])
    revision = StrictIntegerField(min_value=1)


class GenerationArtifactSerializer(StrictSerializer):
    """Any artifact reference (inside generation metadata from another server)."""

    family = RefTokenField()
    artifact_id = RefTokenField()
    revision = StrictIntegerField(min_value=1)


class HandoffSourceCitationSerializer(StrictSerializer):
    """A citation of one Source identity (no digest: Sources never change)."""

    kind = StrictChoiceField(choices=["source"])
    source_ref = CitedSourceSerializer()


class HandoffArtifactCitationSerializer(StrictSerializer):
    """A citation of a revision of this scope's handoff."""

    kind = StrictChoiceField(choices=["artifact"])
    artifact_ref = ArtifactReferenceSerializer()


CITATION_SCHEMA = PolymorphicProxySerializer(
    component_name="HandoffCitation",
    serializers={
        "source": HandoffSourceCitationSerializer,
        "artifact": HandoffArtifactCitationSerializer,
    },
    resource_type_field_name="kind",
)


@extend_schema_field(CITATION_SCHEMA)
class CitationField(serializers.Field):
    """A citation: the ``kind`` tag picks the model, errors nest under the tag."""

    default_error_messages = {
        "dict_type": "Input should be a JSON object.",
        "union_tag_not_found": "Unable to extract tag using discriminator 'kind'.",
        "union_tag_invalid": (
            "Input tag found using 'kind' does not match any of the expected "
            "tags: 'source', 'artifact'."
        ),
    }

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.variants: dict[str, serializers.Serializer] = {
            "source": HandoffSourceCitationSerializer(),
            "artifact": HandoffArtifactCitationSerializer(),
        }

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            self.fail("dict_type")
        if "kind" not in data:
            self.fail("union_tag_not_found")
        kind = data["kind"]
        variant = self.variants.get(kind) if isinstance(kind, str) else None
        if variant is None:
            self.fail("union_tag_invalid")
        try:
            return variant.run_validation(data)
        except ValidationError as exc:
            raise ValidationError({kind: exc.detail}) from exc

    def to_representation(self, value: Any) -> Any:
        return value


def _citations(*, min_length: int, max_length: int, **kwargs: Any) -> Any:
    return BoundedListField(
        child=CitationField(), min_length=min_length, max_length=max_length, **kwargs
    )


# --- Handoff values -------------------------------------------------------------------


class HandoffStatementSerializer(StrictSerializer):
    """A claim and the 1..32 citations that support it."""

    text = TextField()
    citations = _citations(min_length=1, max_length=32)


class HandoffOmissionSerializer(StrictSerializer):
    """Something the handoff knowingly leaves out; ``citation`` may be null."""

    text = TextField()
    citation = CitationField(allow_null=True)  # the key is required, null allowed


class HandoffGenerationEnvelopeSerializer(StrictSerializer):
    """A generation receipt (issued by a generating server; never by this one)."""

    receipt = StrictCharField(min_length=1, max_length=TEXT_MAX_LENGTH)


class HandoffGenerationMetadataSerializer(StrictSerializer):
    """Provenance of a model-generated draft, as another server records it."""

    scope_id = IdentityField()
    prompt_key = StrictChoiceField(choices=["handoff.generate"])
    selection = StrictChoiceField(choices=["built_in", "artifact"])
    artifact = GenerationArtifactSerializer(allow_null=True)
    definition_version = StrictCharField(min_length=1, max_length=256)
    builtin_version = StrictCharField(min_length=1, max_length=256)
    compiled_digest = StrictCharField(
        validators=[RegexValidator(r"^[0-9a-f]{64}\Z", code="string_pattern_mismatch")]
    )
    original_draft_digest = StrictCharField(
        validators=[RegexValidator(r"^[0-9a-f]{64}\Z", code="string_pattern_mismatch")]
    )
    edit_status = StrictChoiceField(choices=["unchanged", "edited"])


class _HandoffBody(StrictSerializer):
    # The fields a draft and a content share (all keys required). A comment, not
    # a docstring: the OpenAPI document would show it on both.

    objective = TextField()
    state = BoundedListField(
        child=HandoffStatementSerializer(), min_length=1, max_length=64
    )
    disposition = StrictChoiceField(choices=HandoffDisposition.values)
    next_action = HandoffStatementSerializer(allow_null=True)
    omissions = BoundedListField(
        child=HandoffOmissionSerializer(), min_length=0, max_length=64
    )


class HandoffDraftSerializer(_HandoffBody):
    """A caller-written handoff to finalize."""

    generation = HandoffGenerationEnvelopeSerializer(
        required=False, allow_null=True, default=None
    )


class HandoffContentSerializer(_HandoffBody):
    """The content of a handoff: a finalized draft."""

    generation = HandoffGenerationMetadataSerializer(
        required=False, allow_null=True, default=None
    )
    schema = StrictChoiceField(choices=[HANDOFF_SCHEMA])


class PreparedHandoffSerializer(StrictSerializer):
    """A finalized handoff of one scope and the revision it was finalized against."""

    generation = HandoffGenerationEnvelopeSerializer(
        required=False, allow_null=True, default=None
    )
    schema = StrictChoiceField(choices=[PREPARED_SCHEMA])
    scope_id = IdentityField()
    base = HandoffBaseSerializer(allow_null=True)  # the key is required
    content = HandoffContentSerializer()


# --- Requests -------------------------------------------------------------------------


def _scope_mismatch(field: str) -> ValidationError:
    return ValidationError(
        {
            field: {
                "scope_id": ErrorDetail(
                    "Must equal the request's scope_id.", code="scope_mismatch"
                )
            }
        }
    )


class FinalizeHandoffSerializer(StrictSerializer):
    """Check a draft's evidence and prepare it for commit."""

    scope_id = IdentityField()
    draft = HandoffDraftSerializer()


class CommitHandoffSerializer(StrictSerializer):
    """Store a prepared handoff of ``scope_id`` as its next revision."""

    scope_id = IdentityField()
    handoff = PreparedHandoffSerializer()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["handoff"]["scope_id"] != attrs["scope_id"]:
            raise _scope_mismatch("handoff")
        return attrs


class ContinueHandoffSerializer(StrictSerializer):
    """A selection and exactly the value it needs: ``prepared`` for ``prepared``,
    ``revision`` for ``exact``, neither for ``latest`` (null counts as absent)."""

    scope_id = IdentityField()
    selection = StrictChoiceField(choices=list(SELECTIONS))
    prepared = PreparedHandoffSerializer(required=False, allow_null=True, default=None)
    revision = ArtifactReferenceSerializer(
        required=False, allow_null=True, default=None
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        needed = {"prepared": "prepared", "exact": "revision"}.get(attrs["selection"])
        errors: dict[str, ErrorDetail] = {}
        for name in ("prepared", "revision"):
            if name == needed and attrs[name] is None:
                errors[name] = ErrorDetail(
                    f"Required for selection '{attrs['selection']}'.",
                    code="selection_mismatch",
                )
            elif name != needed and attrs[name] is not None:
                errors[name] = ErrorDetail(
                    f"Must be null or absent for selection '{attrs['selection']}'.",
                    code="selection_mismatch",
                )
        if errors:
            raise ValidationError(errors)
        prepared = attrs["prepared"]
        if prepared is not None and prepared["scope_id"] != attrs["scope_id"]:
            raise _scope_mismatch("prepared")
        return attrs


class PrepareHandoffHintSerializer(ContinueHandoffSerializer):
    """A selection as for continue, and the hint's UTF-8 budget (all or nothing)."""

    max_bytes = StrictIntegerField(
        required=False,
        default=DEFAULT_MAX_BYTES,
        min_value=1,
        max_value=MAX_BYTES_LIMIT,
    )


class _GenerationRequest(StrictSerializer):
    # The shared fields of the two model-backed operations (answered with 503).

    scope_id = IdentityField()
    objective = TextField()
    rollover_reasons = BoundedListField(
        child=StrictChoiceField(choices=list(ROLLOVER_REASONS)),
        min_length=0,
        max_length=6,
        required=False,
        default=list,
    )
    max_bytes = StrictIntegerField(
        required=False, default=8000, min_value=512, max_value=32768
    )

    def validate_rollover_reasons(self, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValidationError("Items must be unique.", code="unique_items")
        return value


class PrepareHandoffSerializer(_GenerationRequest):
    """Generate a draft from evidence (needs a model: always 503 here)."""

    evidence = _citations(min_length=1, max_length=32)


class ActivateHandoffSerializer(_GenerationRequest):
    """Generate a draft at a boundary Source (needs a model: always 503 here)."""

    boundary_source = CitedSourceSerializer()
    evidence = _citations(min_length=0, max_length=32, required=False, default=list)


class EvidenceRefSerializer(StrictSerializer):
    """One Source identity to resolve, optionally pinned to its content digest."""

    name = StrictChoiceField(choices=["content"])
    source_id = IdentityField(reject_padding=True)
    content_digest = DigestField(required=False, allow_null=True, default=None)


class EvidenceResolveSerializer(StrictSerializer):
    """Resolve 1..256 refs for a purpose."""

    purpose = StrictChoiceField(choices=[p.value for p in Purpose])
    refs = BoundedListField(
        child=EvidenceRefSerializer(), min_length=1, max_length=MAX_REFS
    )


# --- Output shapes (documentation) ----------------------------------------------------


class SourceReferenceOutSerializer(serializers.Serializer):
    name = serializers.CharField()
    source_id = serializers.CharField()


class EvidenceSourceRecordSerializer(serializers.Serializer):
    receipt_identity = serializers.JSONField(allow_null=True)
    scope_id = serializers.CharField()
    source_type = serializers.ChoiceField(choices=["content"])
    source_id = serializers.CharField()
    content = serializers.JSONField()
    position = serializers.IntegerField(min_value=1)
    content_digest = serializers.RegexField(r"^sha256:[0-9a-f]{64}$")


class EvidenceItemSerializer(serializers.Serializer):
    source_ref = SourceReferenceOutSerializer()
    status = serializers.ChoiceField(choices=["available", "unavailable"])
    reason = serializers.ChoiceField(choices=[r.value for r in Reason], allow_null=True)
    working_note = serializers.BooleanField(allow_null=True)
    expires_at = serializers.DateTimeField(allow_null=True)
    # DRF's metaclass takes declared fields off the class, so naming one like
    # ``Field.source`` is fine at run time; the stubs cannot know that.
    source = EvidenceSourceRecordSerializer(allow_null=True)  # type: ignore[assignment]


class EvidenceResolutionSerializer(serializers.Serializer):
    scope_id = serializers.CharField()
    purpose = serializers.ChoiceField(choices=[p.value for p in Purpose])
    resolved_at = serializers.DateTimeField()
    items = EvidenceItemSerializer(many=True)


class CommittedHandoffSerializer(serializers.Serializer):
    reference = ArtifactReferenceSerializer()
    content = HandoffContentSerializer()
    source_refs = SourceReferenceOutSerializer(many=True)
    artifact_refs = ArtifactReferenceSerializer(many=True)


class HandoffEvidenceCheckSerializer(serializers.Serializer):
    claim = serializers.ChoiceField(choices=["state", "next_action"])
    state_index = serializers.IntegerField(min_value=0, allow_null=True)
    status = serializers.ChoiceField(choices=["available", "unavailable"])
    unavailable_evidence = serializers.ListField(child=CitationField(), max_length=32)


class HandoffResolutionSerializer(serializers.Serializer):
    trust = serializers.ChoiceField(choices=["untrusted_history"])
    status = serializers.ChoiceField(choices=["empty", "resolved"])
    scope_id = serializers.CharField()
    content = HandoffContentSerializer(allow_null=True)
    selection = serializers.ChoiceField(choices=list(SELECTIONS), allow_null=True)
    selected_revision = ArtifactReferenceSerializer(allow_null=True)
    current_revision = ArtifactReferenceSerializer(allow_null=True)
    evidence_checks = HandoffEvidenceCheckSerializer(many=True)


class PreparedContextSerializer(serializers.Serializer):
    schema = serializers.ChoiceField(choices=[CONTEXT_SCHEMA])
    status = serializers.ChoiceField(choices=["ready", "empty"])
    content = serializers.CharField(allow_null=True)
    content_bytes = serializers.IntegerField(min_value=0)


# --- Renderers ------------------------------------------------------------------------


def evidence_item(item: ResolvedRef) -> dict[str, Any]:
    """One resolution item; ``working_note`` is null when no Source exists."""
    row = item.row
    expires_at = None if row is None else row["expires_at"]
    return {
        "source_ref": {"name": item.ref.name, "source_id": item.ref.source_id},
        "status": "available" if item.available else "unavailable",
        "reason": None if item.reason is None else item.reason.value,
        "working_note": None if row is None else row["is_working_note"],
        "expires_at": None if expires_at is None else format_datetime(expires_at),
        "source": source_record(row) if item.available else None,
    }


def evidence_resolution_body(resolution: EvidenceResolution) -> dict[str, Any]:
    return {
        "scope_id": resolution.scope_id,
        "purpose": resolution.purpose.value,
        "resolved_at": format_datetime(resolution.resolved_at),
        "items": [evidence_item(item) for item in resolution.items],
    }


def committed_body(committed: CommittedRevision) -> dict[str, Any]:
    """CommittedHandoff, rendered from the stored revision (replays are identical)."""
    content = revision_content(committed.revision)
    return {
        "reference": revision_ref(committed.revision.revision),
        "content": content,
        "source_refs": source_refs_of(content),
        "artifact_refs": artifact_refs_of(content),
    }


def resolution_body(selected: SelectedHandoff) -> dict[str, Any]:
    """HandoffResolution: every key always present."""

    def ref(number: int | None) -> dict[str, Any] | None:
        return None if number is None else revision_ref(number)

    return {
        "trust": "untrusted_history",
        "status": "empty" if selected.content is None else "resolved",
        "scope_id": selected.scope_id,
        "content": selected.content,
        "selection": selected.selection,
        "selected_revision": ref(selected.selected_revision),
        "current_revision": ref(selected.current_revision),
        "evidence_checks": [
            {
                "claim": check.claim.claim,
                "state_index": check.claim.state_index,
                "status": "available" if check.available else "unavailable",
                "unavailable_evidence": check.unavailable,
            }
            for check in selected.checks
        ],
    }


def prepared_context_body(text: str | None) -> dict[str, Any]:
    """PreparedContext; an empty one has null content and never a ``reason``."""
    return {
        "schema": CONTEXT_SCHEMA,
        "status": "empty" if text is None else "ready",
        "content": text,
        "content_bytes": 0 if text is None else len(text.encode("utf-8")),
    }
