"""Input serializers (shape and field rules only) and output shapes of the registry."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from powercontext.api.validation import (
    IdentityField,
    NotBlankCharField,
    QueryIntegerField,
    StrictCharField,
    StrictChoiceField,
    StrictListField,
    StrictSerializer,
)

from .models import Scope
from .selectors import SCOPE_QUERY_FIELDS

LIST_LIMIT_DEFAULT = 50
LIST_LIMIT_MAX = 100
CURSOR_MAX_LENGTH = 4096


# --- Scopes -------------------------------------------------------------------------


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
