"""Input serializers (shape and field rules only) and output shapes of the registry."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rest_framework import serializers

from powercontext.api.validation import (
    AnyJSONField,
    IdentityField,
    NotBlankCharField,
    QueryBooleanField,
    QueryIntegerField,
    StrictCharField,
    StrictChoiceField,
    StrictDateTimeField,
    StrictJSONObjectField,
    StrictListField,
    StrictSerializer,
    format_datetime,
)
from powercontext.jsonvalues import stored_json_loads

from .models import Scope, WorkingNoteKind
from .selectors import SCOPE_QUERY_FIELDS, state_of
from .services import Receipt

CONTENT_MAX_LENGTH = 200_000

LIST_LIMIT_DEFAULT = 50
LIST_LIMIT_MAX = 100
CURSOR_MAX_LENGTH = 4096


# --- Scopes -------------------------------------------------------------------


class ExternalReferenceSerializer(StrictSerializer):
    kind = NotBlankCharField(min_length=1, max_length=128)
    value = NotBlankCharField(min_length=1, max_length=2000)


class ScopeCreateInput(StrictSerializer):
    title = NotBlankCharField(min_length=1, max_length=256)
    summary = NotBlankCharField(min_length=1, max_length=2000)
    parent_scope_id = IdentityField(required=False, allow_null=True, default=None)
    context_references = StrictListField(
        child=IdentityField(), required=False, default=list
    )
    external_references = StrictListField(
        child=ExternalReferenceSerializer(), required=False, default=list
    )
    idempotency_key = IdentityField()

    def validate_context_references(self, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise serializers.ValidationError(
                "Items must be unique.", code="unique_items"
            )
        return value

    def validate_external_references(
        self, value: list[dict[str, str]]
    ) -> list[dict[str, str]]:
        if len({(ref["kind"], ref["value"]) for ref in value}) != len(value):
            raise serializers.ValidationError(
                "Items must be unique.", code="unique_items"
            )
        return value


class ScopeListQuery(StrictSerializer):
    query = StrictCharField(required=False, max_length=256, allow_blank=True)
    query_field = StrictChoiceField(
        choices=[*SCOPE_QUERY_FIELDS, "binding_external_id"], required=False
    )
    parent_scope_id = IdentityField(required=False)
    external_reference_kind = NotBlankCharField(required=False, max_length=128)
    binding_integration = NotBlankCharField(required=False, max_length=128)
    binding_kind = NotBlankCharField(required=False, max_length=64)
    limit = QueryIntegerField(required=False, default=LIST_LIMIT_DEFAULT)
    cursor = StrictCharField(required=False, min_length=1, max_length=CURSOR_MAX_LENGTH)

    def validate_limit(self, value: int) -> int:
        if not 1 <= value <= LIST_LIMIT_MAX:
            raise serializers.ValidationError(
                "Input should be between 1 and 100.", code="limit_out_of_range"
            )
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        unsupported = {"binding_integration", "binding_kind"} & attrs.keys()
        if attrs.get("query_field") == "binding_external_id":
            unsupported.add("query_field")
        if unsupported:
            raise serializers.ValidationError(
                {
                    name: serializers.ErrorDetail(
                        "This service has no scope bindings; "
                        "this filter is not supported.",
                        code="unsupported_filter",
                    )
                    for name in sorted(unsupported)
                }
            )
        if "query" in attrs and "query_field" not in attrs:
            raise serializers.ValidationError(
                {
                    "query_field": serializers.ErrorDetail(
                        "Required with query.", code="missing"
                    )
                }
            )
        return attrs


class ScopeDescriptorSerializer(serializers.Serializer):
    """The wire shape of a scope (documentation; ``scope_descriptor`` renders it)."""

    scope_id = serializers.CharField()
    title = serializers.CharField()
    summary = serializers.CharField()
    parent_scope_id = serializers.CharField(allow_null=True)
    context_references = serializers.ListField(child=serializers.CharField())
    external_references = ExternalReferenceSerializer(many=True)
    version = serializers.IntegerField(min_value=1)


class ScopePageSerializer(serializers.Serializer):
    items = ScopeDescriptorSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


def scope_descriptor(scope: Scope) -> dict[str, Any]:
    """The ScopeDescriptor of ``scope`` (references must be prefetched)."""
    return {
        "scope_id": scope.scope_id,
        "title": scope.title,
        "summary": scope.summary,
        "parent_scope_id": scope.parent_id,
        "context_references": [ref.referenced_id for ref in scope.context_refs.all()],
        "external_references": [
            {"kind": ref.kind, "value": ref.value} for ref in scope.external_refs.all()
        ],
        "version": scope.version,
    }


# --- Capture and creation inputs ----------------------------------------------


class CaptureContentInput(StrictSerializer):
    scope_id = IdentityField()
    source_id = IdentityField(reject_padding=True)
    content = NotBlankCharField(min_length=1, max_length=CONTENT_MAX_LENGTH)
    metadata = StrictJSONObjectField(required=False, allow_null=True, default=None)


class CaptureWorkingNoteInput(StrictSerializer):
    scope_id = IdentityField()
    source_id = IdentityField(reject_padding=True)
    content = NotBlankCharField(min_length=1, max_length=CONTENT_MAX_LENGTH)
    session_id = IdentityField()
    note_kind = StrictChoiceField(choices=WorkingNoteKind.values)
    expires_at = StrictDateTimeField(required=False, allow_null=True, default=None)


class CreateSourceInput(StrictSerializer):
    source_type = StrictChoiceField(
        choices=["content"], required=False, default="content"
    )
    content = AnyJSONField(allow_null=True)

    def validate_content(self, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            raise serializers.ValidationError(
                "Content text must not be blank.", code="string_pattern_mismatch"
            )
        return value


# --- List queries -------------------------------------------------------------


def _in_range(value: int, low: int, high: int | None = None) -> int:
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise serializers.ValidationError(
            f"Input should be {bound}.", code="out_of_range"
        )
    return value


class PageQuery(StrictSerializer):
    limit = QueryIntegerField(required=False, default=LIST_LIMIT_DEFAULT)
    cursor = StrictCharField(required=False, min_length=1, max_length=CURSOR_MAX_LENGTH)

    def validate_limit(self, value: int) -> int:
        return _in_range(value, 1, LIST_LIMIT_MAX)


class SourceWindowQuery(StrictSerializer):
    after = QueryIntegerField(required=False, default=0)
    limit = QueryIntegerField(required=False, default=LIST_LIMIT_DEFAULT)

    def validate_after(self, value: int) -> int:
        return _in_range(value, 0)

    def validate_limit(self, value: int) -> int:
        return _in_range(value, 1, LIST_LIMIT_MAX)


class SourceAuditQuery(PageQuery):
    working_note = QueryBooleanField(required=False)
    session_id = IdentityField(required=False)
    note_kind = StrictChoiceField(choices=WorkingNoteKind.values, required=False)
    state = StrictChoiceField(choices=["active", "expired"], required=False)
    after_position = QueryIntegerField(required=False, default=0)

    def validate_after_position(self, value: int) -> int:
        return _in_range(value, 0)


# --- Output shapes (documentation) and their renderers --------------------------------


class SourceReferenceSerializer(serializers.Serializer):
    name = serializers.CharField()
    source_id = serializers.CharField()


class CaptureReceiptSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["accepted"])
    source = SourceReferenceSerializer()  # type: ignore[assignment]
    position = serializers.IntegerField(min_value=1)


class SourceRecordSerializer(serializers.Serializer):
    receipt_identity = serializers.JSONField(allow_null=True)
    scope_id = serializers.CharField()
    source_type = serializers.ChoiceField(choices=["content"])
    source_id = serializers.CharField()
    content = serializers.JSONField()
    position = serializers.IntegerField(min_value=1)
    content_digest = serializers.RegexField(r"^sha256:[0-9a-f]{64}$")


class SourcePageSerializer(serializers.Serializer):
    items = SourceRecordSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class SourceWindowSerializer(serializers.Serializer):
    items = SourceRecordSerializer(many=True)
    next_after = serializers.IntegerField()
    high_watermark = serializers.IntegerField()


class AttemptSerializer(serializers.Serializer):
    outcome = serializers.ChoiceField(
        choices=["accepted", "replayed", "conflict", "rejected"]
    )
    reason = serializers.CharField(allow_null=True)
    at = serializers.DateTimeField()
    principal = serializers.CharField()
    request_id = serializers.CharField()


class AttemptPageSerializer(serializers.Serializer):
    items = AttemptSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class AuditRecordSerializer(SourceRecordSerializer):
    metadata = serializers.JSONField(allow_null=True)
    working_note = serializers.BooleanField()
    session_id = serializers.CharField(allow_null=True)
    note_kind = serializers.CharField(allow_null=True)
    expires_at = serializers.DateTimeField(allow_null=True)
    state = serializers.ChoiceField(choices=["active", "expired", "closed", "purged"])
    created_at = serializers.DateTimeField()
    created_by = serializers.CharField()
    request_id = serializers.CharField()
    attempts_total = serializers.IntegerField()
    attempts = AttemptSerializer(many=True)


class AuditPageSerializer(serializers.Serializer):
    items = AuditRecordSerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


def receipt_body(receipt: Receipt) -> dict[str, Any]:
    """The capture receipt, exactly the reference's three keys."""
    return {
        "status": "accepted",
        "source": {"name": receipt.source_type, "source_id": receipt.source_id},
        "position": receipt.position,
    }


def source_record(row: Any) -> dict[str, Any]:
    """The SourceRecord of a row (a dict or an object with the record fields)."""
    fields = row if isinstance(row, dict) else vars(row)
    return {
        "receipt_identity": None,
        "scope_id": fields["scope_id"],
        "source_type": fields["source_type"],
        "source_id": fields["source_id"],
        "content": stored_json_loads(fields["content"]),
        "position": fields["position"],
        "content_digest": fields["content_digest"],
    }


def attempt_item(attempt: dict[str, Any]) -> dict[str, Any]:
    return {
        "outcome": attempt["outcome"],
        "reason": attempt["reason"],
        "at": format_datetime(attempt["at"]),
        "principal": attempt["principal"],
        "request_id": attempt["request_id"],
    }


def audit_record(row: dict[str, Any], now: datetime) -> dict[str, Any]:
    expires_at = row["expires_at"]
    return {
        **source_record(row),
        "metadata": row["metadata"],
        "working_note": row["is_working_note"],
        "session_id": row["session_id"],
        "note_kind": row["note_kind"],
        "expires_at": None if expires_at is None else format_datetime(expires_at),
        "state": state_of(row, now),
        "created_at": format_datetime(row["created_at"]),
        "created_by": row["created_by"],
        "request_id": row["request_id"],
        "attempts_total": row["attempts_total"],
        "attempts": [attempt_item(attempt) for attempt in row["attempts"]],
    }
