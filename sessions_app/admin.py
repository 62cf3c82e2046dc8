"""Read-only audit console for envelopes and their revisions.

Search is exact-match on identity (scope id, session id; for revisions also the
request id and principal), never ``icontains``: identities are compared byte for
byte. Meta is shown pretty-printed; a revision's meta is rebuilt from the values
it references.
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.utils.html import format_html

from sources.admin import ReadOnlyAdminMixin

from .models import EnvelopeRevision, SessionEnvelope
from .selectors import revision_meta


def pretty_json(value: Any) -> str:
    """``value`` as indented JSON in a ``<pre>`` block (escaped)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    return format_html('<pre style="white-space: pre-wrap">{}</pre>', text)


class EnvelopeRevisionInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = EnvelopeRevision
    fields = readonly_fields = (
        "version",
        "writer",
        "operation",
        "principal",
        "request_id",
        "created_at",
    )
    ordering = ("-version",)
    show_change_link = True
    max_num = 0


@admin.register(SessionEnvelope)
class SessionEnvelopeAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["scope_id", "session_id", "version", "updated_at"]
    search_fields = ["=scope__scope_id", "=session_id"]
    ordering = ["-updated_at"]
    show_full_result_count = False
    fields = readonly_fields = (
        "scope",
        "session_id",
        "version",
        "clock",
        "created_at",
        "updated_at",
        "stored_meta",
    )
    inlines = [EnvelopeRevisionInline]

    @admin.display(description="meta (as stored)")
    def stored_meta(self, envelope: SessionEnvelope) -> str:
        return pretty_json(envelope.meta)


@admin.register(EnvelopeRevision)
class EnvelopeRevisionAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
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
    search_fields = [
        "=envelope__scope__scope_id",
        "=envelope__session_id",
        "=request_id",
        "=principal",
    ]
    ordering = ["-created_at"]
    show_full_result_count = False
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
