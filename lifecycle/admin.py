"""Read-only audit of every lifecycle action: holds, releases, purge runs,
redactions, exports (session closures are with the registry's admin)."""

from __future__ import annotations

from django.contrib import admin

from powercontext.admintools import (
    CappedCountPaginator,
    ExactSearchMixin,
    ReadOnlyAdminMixin,
)

from .models import ExportRecord, LegalHold, LegalHoldRelease, PurgeRun, Redaction


def _fields(*names: str) -> tuple[str, ...]:
    return (*names, "request_id")


class LifecycleAdmin(ExactSearchMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    paginator = CappedCountPaginator
    show_full_result_count = False
    list_per_page = 50
    ordering = ["-id"]
    sortable_by = ()


@admin.register(LegalHold)
class LegalHoldAdmin(LifecycleAdmin):
    list_display = readonly_fields = _fields(
        "hold_id", "scope", "session_id", "set_by", "set_at", "reason"
    )
    search_fields = ["hold_id"]
    exact_search_fields = ("hold_id", "scope_id", "session_id", "set_by")
    search_help_text = "Exact hold id, scope id, session id or who set it."


@admin.register(LegalHoldRelease)
class LegalHoldReleaseAdmin(LifecycleAdmin):
    list_display = readonly_fields = _fields(
        "hold", "released_by", "released_at", "reason"
    )
    search_fields = ["hold__hold_id"]
    exact_search_fields = ("hold__hold_id", "released_by")
    search_help_text = "Exact hold id or who released it."


@admin.register(PurgeRun)
class PurgeRunAdmin(LifecycleAdmin):
    list_display = _fields(
        "run_id",
        "scope",
        "dry_run",
        "older_than_seconds",
        "purged",
        "skipped_held",
        "skipped_cited",
        "envelopes_cleared",
        "started_by",
        "started_at",
    )
    list_filter = ["dry_run"]
    search_fields = ["run_id"]
    exact_search_fields = ("run_id", "scope_id", "started_by")
    search_help_text = "Exact run id, scope id or who started it."
    readonly_fields = (*list_display, "cutoff", "finished_at")


@admin.register(Redaction)
class RedactionAdmin(LifecycleAdmin):
    list_display = _fields(
        "redaction_id", "scope", "source", "redacted_by", "redacted_at"
    )
    search_fields = ["redaction_id"]
    exact_search_fields = ("redaction_id", "scope_id", "redacted_by")
    search_help_text = "Exact redaction id, scope id or who redacted."
    readonly_fields = _fields(
        "redaction_id", "scope", "source", "redacted_by", "redacted_at", "reason"
    )


@admin.register(ExportRecord)
class ExportRecordAdmin(LifecycleAdmin):
    list_display = _fields(
        "scope_id", "session_id", "exported_by", "via", "exported_at", "records"
    )
    list_filter = ["via"]
    search_fields = ["scope_id"]
    exact_search_fields = ("scope_id", "session_id", "exported_by", "chain")
    search_help_text = "Exact scope id, session id, who exported or chained digest."
    readonly_fields = (
        *list_display,
        "finished_at",
        "format_version",
        "counts",
        "chain",
    )
