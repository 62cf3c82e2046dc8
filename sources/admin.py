"""Read-only audit console for the registry. The search box is exact-match on
identity; the "text contains" filter finds a fragment of the text (the search's
substring index)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.contrib import admin
from django.contrib.admin import ShowFacets
from django.db.models import Min, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode

from powercontext.admintools import (
    CappedCountPaginator,
    ExactSearchMixin,
    ReadOnlyAdminMixin,
)
from powercontext.jsonvalues import stored_json_loads

from .availability import Availability, availability_condition
from .models import (
    CaptureAttempt,
    ContentSource,
    Scope,
    ScopeContextReference,
    ScopeExternalReference,
    SessionClosure,
)
from .search import QUERY_MAX_LENGTH, SUBSTRING_MIN_LENGTH
from .selectors.search import text_contains


class ScopeContextReferenceInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = ScopeContextReference
    fk_name = "scope"
    fields = readonly_fields = ("ordinal", "referenced")


class ScopeExternalReferenceInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = ScopeExternalReference
    fields = readonly_fields = ("ordinal", "kind", "value")


@admin.register(Scope)
class ScopeAdmin(ExactSearchMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["scope_id", "title", "parent", "created_by", "created_at"]
    search_fields = ["scope_id"]
    exact_search_fields = ("scope_id", "title", "created_by")
    search_help_text = "Exact scope id, title or creator."
    ordering = ["scope_id"]
    show_full_result_count = False
    show_facets = ShowFacets.NEVER
    inlines = [ScopeContextReferenceInline, ScopeExternalReferenceInline]
    readonly_fields = ["registry"]

    @admin.display(description="registry")
    def registry(self, scope: Scope) -> str:
        # Links, not inlines: a scope holds millions of Sources.
        return format_html(
            '<a href="{}">Sources of this scope</a> · '
            '<a href="{}">capture attempts in this scope</a>',
            _changelist("contentsource", scope__exact=scope.scope_id),
            _changelist("captureattempt", scope__exact=scope.scope_id),
        )


class AvailabilityFilter(admin.SimpleListFilter):
    """The audit ``state`` of a Source, by the registry's one definition."""

    title = "state"
    parameter_name = "state"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(state.value, state.value) for state in Availability]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        if value not in {state.value for state in Availability}:
            return queryset
        state = Availability(value)
        return queryset.filter(availability_condition(state, timezone.now()))


class TextSearchFilter(admin.ListFilter):
    """Sources whose text contains a fragment (3+ characters, ignoring case),
    through the search's substring index (docs/operations.md, "Search indexes")."""

    title = "text contains"
    parameter_name = "text"
    template = "admin/text_search_filter.html"

    def __init__(
        self,
        request: HttpRequest,
        params: dict[str, Any],
        model: Any,
        model_admin: Any,
    ) -> None:
        super().__init__(request, params, model, model_admin)
        value = params.pop(self.parameter_name, None)
        self.value = value[-1] if isinstance(value, list) else value
        self.kept_parameters = [
            (name, v)
            for name, values in request.GET.lists()
            if name != self.parameter_name
            for v in values
        ]

    def has_output(self) -> bool:
        return True

    def expected_parameters(self) -> list[str | None]:
        return [self.parameter_name]

    def choices(self, changelist: Any) -> Iterator[Any]:
        return iter(())

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if not self.value:
            return queryset
        if not SUBSTRING_MIN_LENGTH <= len(self.value) <= QUERY_MAX_LENGTH:
            return queryset.none()
        return queryset.filter(pk__in=text_contains(self.value))


class AttemptReasonFilter(admin.SimpleListFilter):
    """The ``reason`` of an attempt, offered from the reasons in the log.

    Django's own filter for a plain column reads ``SELECT DISTINCT`` over the whole
    log; this one asks the reason index for the next reason after the last, one
    probe per distinct reason (a handful).
    """

    title = "reason"
    parameter_name = "reason"
    MAX_SHOWN = 50

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        reasons: list[str] = []
        given = CaptureAttempt.objects.filter(reason__isnull=False)
        while len(reasons) < self.MAX_SHOWN:
            later = given.filter(reason__gt=reasons[-1]) if reasons else given
            reason = later.aggregate(first=Min("reason"))["first"]
            if reason is None:
                break
            reasons.append(reason)
        return [(reason, reason) for reason in reasons]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        value = self.value()
        return queryset if value is None else queryset.filter(reason=value)


class RegistryAuditAdmin(ExactSearchMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    paginator = CappedCountPaginator
    show_full_result_count = False
    # Facet counts are a COUNT per filter choice over the whole table.
    show_facets = ShowFacets.NEVER
    list_per_page = 50


@admin.register(ContentSource)
class ContentSourceAdmin(RegistryAuditAdmin):
    list_display = [
        "scope",
        "position",
        "source_id",
        "is_working_note",
        "note_kind",
        "session_id",
        "expires_at",
        "created_at",
        "created_by",
    ]
    list_filter = ["is_working_note", "note_kind", AvailabilityFilter, TextSearchFilter]
    search_fields = ["source_id"]  # shows the search box; the match is exact
    exact_search_fields = ("scope_id", "source_id", "session_id")
    search_help_text = "Exact scope id, source id or session id."
    ordering = ["scope", "position"]
    sortable_by = ["position", "created_at"]
    list_select_related = False
    readonly_fields = [
        "scope",
        "source_type",
        "source_id",
        "position",
        "pretty_content",
        "pretty_metadata",
        "is_working_note",
        "session_id",
        "note_kind",
        "expires_at",
        "attempt_history",
        "value_digest",
        "content_digest",
        "created_at",
        "created_by",
        "request_id",
        "purged_at",
        "purge_run",
    ]
    exclude = ["content", "metadata"]

    @admin.display(description="content")
    def pretty_content(self, obj: ContentSource) -> str:
        return format_html("<pre>{}</pre>", _pretty(obj.content))

    @admin.display(description="metadata")
    def pretty_metadata(self, obj: ContentSource) -> str:
        return format_html(
            "<pre>{}</pre>", json.dumps(obj.metadata, indent=2, ensure_ascii=False)
        )

    @admin.display(description="attempt history")
    def attempt_history(self, obj: ContentSource) -> str:
        """The newest attempts on this identity (the identity index, newest first)
        and a link to all of them."""
        identity = {
            "scope": obj.scope_id,
            "source_type": obj.source_type,
            "source_id": obj.source_id,
        }
        attempts = CaptureAttempt.objects.filter(**identity).order_by("-id")
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (a.at.isoformat(), a.outcome, a.reason or "", a.principal, a.request_id)
                for a in attempts[:HISTORY_SHOWN]
            ),
        )
        link = _changelist(
            "captureattempt", **{f"{name}__exact": v for name, v in identity.items()}
        )
        return format_html(
            '<table class="attempt-history"><thead><tr><th>at</th><th>outcome</th>'
            "<th>reason</th><th>principal</th><th>request id</th></tr></thead>"
            '<tbody>{}</tbody></table><a href="{}">every attempt on this identity</a>',
            rows,
            link,
        )


@admin.register(CaptureAttempt)
class CaptureAttemptAdmin(RegistryAuditAdmin):
    list_display = [
        "at",
        "scope",
        "source_id",
        "outcome",
        "reason",
        "principal",
        "request_id",
    ]
    list_filter = ["outcome", AttemptReasonFilter]
    search_fields = ["source_id"]
    exact_search_fields = ("scope_id", "source_id", "principal", "request_id")
    search_help_text = "Exact scope id, source id, principal or request id."
    ordering = ["-id"]
    sortable_by = ()
    readonly_fields = [
        "scope",
        "source_type",
        "source_id",
        "outcome",
        "reason",
        "value_digest",
        "principal",
        "request_id",
        "at",
    ]


HISTORY_SHOWN = 20


def _changelist(model_name: str, **filters: str) -> str:
    """The URL of a registry list with ``filters`` applied."""
    return f"{reverse(f'admin:sources_{model_name}_changelist')}?{urlencode(filters)}"


def _pretty(stored_content: str | None) -> str:
    if stored_content is None:
        return "(tombstone: purged or redacted)"
    value = stored_json_loads(stored_content)
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False)


@admin.register(SessionClosure)
class SessionClosureAdmin(RegistryAuditAdmin):
    list_display = ["closed_at", "scope", "session_id", "closed_by", "request_id"]
    readonly_fields = ["closed_at", "scope", "session_id", "closed_by", "request_id"]
    search_fields = ["session_id"]
    exact_search_fields = ("scope_id", "session_id", "closed_by")
    search_help_text = "Exact scope id, session id or who closed it."
    ordering = ["-id"]
    sortable_by = ()
