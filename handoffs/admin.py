"""Read-only audit console for handoffs: revisions with statements, citations and
lineage; "which revisions cite this Source?" by exact search on citations."""

from __future__ import annotations

import json

from django.contrib import admin
from django.contrib.admin import ShowFacets
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from powercontext.admintools import (
    CappedCountPaginator,
    ExactSearchMixin,
    ReadOnlyAdminMixin,
)
from powercontext.jsonvalues import stored_json_loads

from .models import (
    HandoffCitation,
    HandoffHead,
    HandoffLineage,
    HandoffRevision,
    HandoffStatement,
)


class HandoffStatementInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = HandoffStatement
    fields = readonly_fields = ("claim", "ordinal", "text", "cited")
    ordering = ("claim", "ordinal")
    extra = 0

    def get_queryset(self, request: HttpRequest) -> QuerySet[HandoffStatement]:
        return super().get_queryset(request).prefetch_related("citations")

    @admin.display(description="citations")
    def cited(self, statement: HandoffStatement) -> str:
        return format_html_join(
            "",
            "<div>{}</div>",
            ((str(citation),) for citation in statement.citations.all()),
        )


class HandoffLineageInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = HandoffLineage
    fields = readonly_fields = ("ordinal", "source", "working_note")
    extra = 0

    def get_queryset(self, request: HttpRequest) -> QuerySet[HandoffLineage]:
        return super().get_queryset(request).select_related("source")

    @admin.display(description="working note", boolean=True)
    def working_note(self, lineage: HandoffLineage) -> bool:
        return lineage.source.is_working_note


class HandoffAuditAdmin(ExactSearchMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    paginator = CappedCountPaginator
    show_full_result_count = False
    # Facet counts are a COUNT per filter choice over the whole table.
    show_facets = ShowFacets.NEVER
    list_per_page = 50


@admin.register(HandoffRevision)
class HandoffRevisionAdmin(HandoffAuditAdmin):
    list_display = [
        "scope",
        "revision",
        "disposition",
        "short_objective",
        "created_at",
        "created_by",
    ]
    list_filter = ["disposition"]
    search_fields = ["scope__scope_id"]  # shows the search box; the match is exact
    exact_search_fields = ("scope_id", "created_by", "request_id", "content_digest")
    search_help_text = "Exact scope id, creator, request id or content digest."
    ordering = ["scope", "-revision"]
    sortable_by = ["revision", "created_at"]
    readonly_fields = [
        "scope",
        "revision",
        "disposition",
        "objective",
        "pretty_content",
        "content_digest",
        "created_at",
        "created_by",
        "request_id",
    ]
    exclude = ["content"]
    inlines = [HandoffStatementInline, HandoffLineageInline]

    @admin.display(description="objective")
    def short_objective(self, revision: HandoffRevision) -> str:
        text = revision.objective
        return text if len(text) <= 80 else text[:79] + "…"

    @admin.display(description="content")
    def pretty_content(self, revision: HandoffRevision) -> str:
        pretty = json.dumps(
            stored_json_loads(revision.content), indent=2, ensure_ascii=False
        )
        return format_html("<pre>{}</pre>", pretty)


@admin.register(HandoffCitation)
class HandoffCitationAdmin(HandoffAuditAdmin):
    list_display = ["revision", "claim", "statement_ordinal", "ordinal", "cites"]
    list_filter = ["kind", "statement__claim"]
    search_fields = ["source_id"]
    exact_search_fields = ("source_id", "statement__revision__scope_id")
    search_help_text = "Exact cited source id, or scope id."
    ordering = ["-statement__revision_id", "statement__claim", "statement__ordinal"]
    sortable_by = ()
    list_select_related = ["statement__revision"]
    readonly_fields = [
        "statement",
        "ordinal",
        "kind",
        "source_type",
        "source_id",
        "artifact_family",
        "artifact_id",
        "artifact_revision",
    ]

    @admin.display(description="revision")
    def revision(self, citation: HandoffCitation) -> HandoffRevision:
        return citation.statement.revision

    @admin.display(description="claim")
    def claim(self, citation: HandoffCitation) -> str:
        return citation.statement.claim

    @admin.display(description="statement")
    def statement_ordinal(self, citation: HandoffCitation) -> int:
        return citation.statement.ordinal

    @admin.display(description="cites")
    def cites(self, citation: HandoffCitation) -> str:
        return str(citation)


@admin.register(HandoffLineage)
class HandoffLineageAdmin(HandoffAuditAdmin):
    list_display = ["revision", "ordinal", "source"]
    search_fields = ["source__source_id"]
    exact_search_fields = ("source__source_id", "revision__scope_id")
    search_help_text = "Exact pinned source id, or scope id."
    ordering = ["-revision_id", "ordinal"]
    sortable_by = ()
    list_select_related = ["revision", "source"]
    readonly_fields = ["revision", "ordinal", "source"]


@admin.register(HandoffHead)
class HandoffHeadAdmin(HandoffAuditAdmin):
    list_display = ["scope", "current", "updated_at"]
    search_fields = ["scope__scope_id"]
    exact_search_fields = ("scope_id",)
    search_help_text = "Exact scope id."
    ordering = ["scope"]
    list_select_related = ["current"]
    readonly_fields = ["scope", "current", "updated_at"]
