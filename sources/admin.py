"""Read-only audit console for the registry. Search is exact-match on identity."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from .models import Scope, ScopeContextReference, ScopeExternalReference


class ReadOnlyAdminMixin:
    """Nothing in the registry is added, changed or deleted through the admin."""

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        return {}

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ScopeContextReferenceInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = ScopeContextReference
    fk_name = "scope"
    fields = readonly_fields = ("ordinal", "referenced")


class ScopeExternalReferenceInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = ScopeExternalReference
    fields = readonly_fields = ("ordinal", "kind", "value")


@admin.register(Scope)
class ScopeAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["scope_id", "title", "parent", "created_by", "created_at"]
    search_fields = ["=scope_id", "=title", "=created_by"]
    ordering = ["scope_id"]
    show_full_result_count = False
    inlines = [ScopeContextReferenceInline, ScopeExternalReferenceInline]
