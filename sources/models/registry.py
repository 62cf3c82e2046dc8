"""The registry: captured Sources, session closures and every capture attempt.

Rows are insert-only (``ImmutableModel``; PostgreSQL and SQLite triggers); the only
change a Source may take is its tombstone (decision 0013).
"""

from __future__ import annotations

from django.db import models

from powercontext.db.immutable import ImmutableModel
from powercontext.jsonvalues import StoredJSONDecoder

from .scopes import Scope


class WorkingNoteKind(models.TextChoices):
    INSPECTION = "inspection"
    ABANDONED_APPROACH = "abandoned_approach"
    VALIDATION = "validation"
    UNRESOLVED = "unresolved"
    HOST_CONTEXT = "host_context"


class ContentSource(ImmutableModel):
    """One captured Source: immutable once accepted.

    ``content`` holds the RFC 8785 canonical JSON of the captured value, so
    ``content_digest`` is the SHA-256 of exactly the stored text. ``value_digest``
    covers the whole value document (content, metadata, note fields) and decides
    replay (equal) versus conflict (different). ``is_working_note`` is owned by
    the server: only the working-note capture sets it.
    """

    # Indexed by the identity and position constraints, which lead with it (no
    # index of its own: each one more is written by every capture).
    scope = models.ForeignKey(
        Scope, on_delete=models.PROTECT, related_name="sources", db_index=False
    )
    source_type = models.CharField(max_length=32, default="content")
    source_id = models.CharField(max_length=256)
    position = models.BigIntegerField()
    # NULL only in a tombstone (purge or redaction, docs/api.md).
    content = models.TextField(  # noqa: DJ001
        null=True, help_text="RFC 8785 canonical JSON of the content value."
    )
    # NULL for Sources captured before it was kept; readers fall back to the
    # content's length (sources.selectors.records.content_size).
    content_bytes = models.BigIntegerField(
        null=True, blank=True, help_text="UTF-8 bytes of ``content``."
    )
    metadata = models.JSONField(default=dict, null=True, decoder=StoredJSONDecoder)
    metadata_bytes = models.BigIntegerField(
        null=True, blank=True, help_text="UTF-8 bytes of ``metadata`` as JSON."
    )
    is_working_note = models.BooleanField(default=False)
    # NULL (not "") for plain Sources: the value document says null there.
    session_id = models.CharField(max_length=256, null=True, blank=True)  # noqa: DJ001
    note_kind = models.CharField(  # noqa: DJ001
        max_length=32, choices=WorkingNoteKind.choices, null=True, blank=True
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    value_digest = models.CharField(max_length=64)
    content_digest = models.CharField(max_length=71)
    created_at = models.DateTimeField()
    created_by = models.CharField(max_length=150)
    request_id = models.CharField(max_length=16)
    # Set once, with content and metadata nulled, by purge or redaction; the
    # database allows no other change (powercontext.db.guards.tombstone_guard).
    purged_at = models.DateTimeField(null=True, blank=True)
    purge_run = models.CharField(  # noqa: DJ001
        max_length=40, null=True, blank=True, help_text="The purge or redaction id."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "source_type", "source_id"],
                name="sources_source_identity_uniq",
            ),
            models.UniqueConstraint(
                fields=["scope", "position"], name="sources_source_position_uniq"
            ),
            models.CheckConstraint(
                condition=models.Q(position__gte=1),
                name="sources_source_position_positive",
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(
                        is_working_note=True,
                        session_id__isnull=False,
                        note_kind__isnull=False,
                    )
                    | models.Q(
                        is_working_note=False,
                        session_id__isnull=True,
                        note_kind__isnull=True,
                        expires_at__isnull=True,
                    )
                ),
                name="sources_source_note_fields_consistent",
            ),
        ]
        indexes = [
            # Generation window and working_note=false audit filter.
            models.Index(
                fields=["scope", "position"],
                name="sources_source_plain_pos_idx",
                condition=models.Q(is_working_note=False),
            ),
            # working_note=true and state filters.
            models.Index(
                fields=["scope", "position"],
                name="sources_source_note_pos_idx",
                condition=models.Q(is_working_note=True),
            ),
            models.Index(
                fields=["scope", "session_id", "position"],
                name="sources_source_session_idx",
                condition=models.Q(is_working_note=True),
            ),
            models.Index(
                fields=["scope", "note_kind", "position"],
                name="sources_source_kind_idx",
                condition=models.Q(is_working_note=True),
            ),
            # The audit console (docs/decisions/0022): exact search on a source id
            # or session id across scopes, in the list's order, and the "expired"
            # state filter.
            models.Index(
                fields=["source_id", "scope", "position"], name="sources_source_id_idx"
            ),
            models.Index(
                fields=["session_id", "scope", "position"],
                name="sources_source_session_id_idx",
                condition=models.Q(session_id__isnull=False),
            ),
            models.Index(
                fields=["expires_at"],
                name="sources_source_expiry_idx",
                condition=models.Q(is_working_note=True, expires_at__isnull=False),
            ),
            # The console's "purged" state, in the list's order: without it, a
            # registry with few purged Sources was read whole to fill one page.
            models.Index(
                fields=["scope", "position"],
                name="sources_source_purged_idx",
                condition=models.Q(purged_at__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.scope_id}/{self.source_type}/{self.source_id}@{self.position}"


class SessionClosure(ImmutableModel):
    """That a session ended (docs/api.md): written once, never changed.

    From ``closed_at`` on, the session's Working Notes are ``closed``
    (``sources.availability``) and its envelope refuses writes.
    """

    # Indexed by sources_closure_session_uniq, which leads with it.
    scope = models.ForeignKey(
        Scope, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    session_id = models.CharField(max_length=256)
    closed_at = models.DateTimeField()
    closed_by = models.CharField(max_length=150)
    request_id = models.CharField(max_length=16)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "session_id"], name="sources_closure_session_uniq"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.scope_id} / {self.session_id} closed {self.closed_at}"


class CaptureOutcome(models.TextChoices):
    ACCEPTED = "accepted"
    REPLAYED = "replayed"
    CONFLICT = "conflict"
    REJECTED = "rejected"


class CaptureAttempt(ImmutableModel):
    """Append-only log of every capture attempt that reached the registry's rules."""

    # Indexed by sources_attempt_identity_idx, which leads with it.
    scope = models.ForeignKey(
        Scope, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    source_type = models.CharField(max_length=32)
    source_id = models.CharField(max_length=256)
    outcome = models.CharField(max_length=16, choices=CaptureOutcome.choices)
    reason = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    value_digest = models.CharField(max_length=64)
    principal = models.CharField(max_length=150)
    request_id = models.CharField(max_length=16)
    at = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(
                fields=["scope", "source_type", "source_id", "id"],
                name="sources_attempt_identity_idx",
            ),
            # The audit console (docs/decisions/0022): exact search across scopes
            # and the outcome and reason filters, newest first. Accepted attempts
            # (nearly all) are left out of the outcome and reason indexes.
            models.Index(fields=["source_id", "id"], name="sources_attempt_source_idx"),
            models.Index(
                fields=["principal", "id"], name="sources_attempt_principal_idx"
            ),
            models.Index(
                fields=["request_id", "id"], name="sources_attempt_request_idx"
            ),
            models.Index(
                fields=["outcome", "id"],
                name="sources_attempt_outcome_idx",
                condition=~models.Q(outcome="accepted"),
            ),
            models.Index(
                fields=["reason", "id"],
                name="sources_attempt_reason_idx",
                condition=models.Q(reason__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source_id}: {self.outcome}"
