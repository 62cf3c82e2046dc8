"""Read-only audit console for envelopes and their revisions.

Search is exact, byte-for-byte equality on identity (scope id, session id; for
revisions also the request id and principal): never ``icontains``, never ``=``
(which Django reads as ``iexact``). Meta is shown pretty-printed; a revision's
meta is rebuilt from the values it references.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.contrib.admin import ShowFacets
from django.urls import reverse
from django.utils.html import format_html

from powercontext.admintools import (
    CappedCountPaginator,
    ExactSearchMixin,
    ReadOnlyAdminMixin,
)

from .models import EnvelopeRevision, SessionEnvelope
from .selectors import revision_meta


def pretty_json(value: Any) -> str:
    """``value`` as indented JSON in a ``<pre>`` block (escaped)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    return format_html('<pre style="white-space: pre-wrap">{}</pre>', text)


class AuditAdmin(ExactSearchMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    paginator = CappedCountPaginator
    show_full_result_count = False
    # Facet counts are a COUNT per filter choice over the whole table.
    show_facets = ShowFacets.NEVER
    list_per_page = 50


@admin.register(SessionEnvelope)
class SessionEnvelopeAdmin(AuditAdmin):
    list_display = ["scope_id", "session_id", "version", "updated_at"]
    search_fields = ["session_id"]  # shows the search box; the match is exact
    exact_search_fields = ("scope_id", "session_id")
    search_help_text = "Exact scope id or session id."
    ordering = ["-updated_at"]
    sortable_by = ["version", "updated_at"]
    fields = readonly_fields = (
        "scope",
        "session_id",
        "version",
        "notes_version",
        "clock",
        "created_at",
        "updated_at",
        "revisions",
        "stored_meta",
    )

    @admin.display(description="meta (as stored)")
    def stored_meta(self, envelope: SessionEnvelope) -> str:
        return pretty_json(envelope.meta)

    @admin.display(description="revisions")
    def revisions(self, envelope: SessionEnvelope) -> str:
        # A link, not an inline: an envelope can have thousands of revisions.
        url = reverse("admin:sessions_app_enveloperevision_changelist")
        return format_html(
            '<a href="{}?envelope__id__exact={}">revisions of this envelope</a>',
            url,
            envelope.pk,
        )


@admin.register(EnvelopeRevision)
class EnvelopeRevisionAdmin(AuditAdmin):
    list_display = [
        "envelope",
        "version",
        "writer",
        "operation",
        "principal",
        "request_id",
        "created_at",
    ]
    list_select_related = ["envelope"]
    list_filter = ["writer", "operation"]
    search_fields = ["envelope__session_id"]
    exact_search_fields = (
        "envelope__scope_id",
        "envelope__session_id",
        "request_id",
        "principal",
    )
    search_help_text = "Exact scope id, session id, request id or principal."
    ordering = ["-created_at"]
    sortable_by = ["version", "created_at"]
    fields = readonly_fields = (
        "envelope",
        "version",
        "clock",
        "writer",
        "operation",
        "principal",
        "request_id",
        "created_at",
        "meta",
    )

    @admin.display(description="meta")
    def meta(self, revision: EnvelopeRevision) -> str:
        return pretty_json(revision_meta(revision))
