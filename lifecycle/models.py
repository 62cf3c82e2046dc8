"""Lifecycle records: legal holds and their releases, purge runs, redactions.

Every record is written once and never changed (``ImmutableModel``, and on
PostgreSQL the triggers of migration 0002): a hold is released by a release
record, not by an update, so who set it, who released it and why both stay.
Session closures live with the registry (``sources.models.SessionClosure``),
whose availability rule reads them.
"""

from __future__ import annotations

from django.db import models

from powercontext.db.immutable import ImmutableModel
from sources.models import ContentSource, Scope


class LegalHold(ImmutableModel):
    """A hold on a whole scope (``session_id`` NULL) or on one session of it."""

    hold_id = models.CharField(max_length=40, unique=True)
    # Indexed by lifecycle_hold_idx, which leads with it.
    scope = models.ForeignKey(
        Scope, on_delete=models.PROTECT, related_name="+", db_index=False
    )
    session_id = models.CharField(  # noqa: DJ001
        max_length=256, null=True, blank=True
    )
    reason = models.CharField(max_length=2000)
    set_by = models.CharField(max_length=150)
    set_at = models.DateTimeField()
    request_id = models.CharField(max_length=16)

    class Meta:
        indexes = [
            models.Index(fields=["scope", "session_id"], name="lifecycle_hold_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.hold_id} on {self.scope_id} / {self.session_id or '*'}"


class LegalHoldRelease(ImmutableModel):
    """That a hold ended: at most one per hold."""

    hold = models.OneToOneField(
        LegalHold, on_delete=models.PROTECT, related_name="release"
    )
    reason = models.CharField(max_length=2000)
    released_by = models.CharField(max_length=150)
    released_at = models.DateTimeField()
    request_id = models.CharField(max_length=16)

    def __str__(self) -> str:
        return f"{self.hold_id} released {self.released_at}"


class PurgeRun(ImmutableModel):
    """One purge, recorded when it finishes (dry runs too)."""

    run_id = models.CharField(max_length=40, unique=True)
    scope = models.ForeignKey(  # NULL: every scope (the command without --scope)
        Scope, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    older_than_seconds = models.BigIntegerField()
    cutoff = models.DateTimeField()
    dry_run = models.BooleanField()
    purged = models.BigIntegerField()
    skipped_held = models.BigIntegerField()
    skipped_cited = models.BigIntegerField()
    envelopes_cleared = models.BigIntegerField()
    started_by = models.CharField(max_length=150)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    request_id = models.CharField(max_length=16)

    def __str__(self) -> str:
        return f"{self.run_id}: {self.purged} purged"


class Redaction(ImmutableModel):
    """One Source turned into a tombstone on request, with the reason."""

    redaction_id = models.CharField(max_length=40, unique=True)
    scope = models.ForeignKey(Scope, on_delete=models.PROTECT, related_name="+")
    source = models.ForeignKey(
        ContentSource, on_delete=models.PROTECT, related_name="+"
    )
    reason = models.CharField(max_length=2000)
    redacted_by = models.CharField(max_length=150)
    redacted_at = models.DateTimeField()
    request_id = models.CharField(max_length=16)

    def __str__(self) -> str:
        return f"{self.redaction_id}: source #{self.source_id}"


class ExportRecord(ImmutableModel):
    """That a scope (or one session of it) left the instance as a bundle.

    Written once the bundle's last record is out, before its trailer
    (``lifecycle.services.exports``): a bundle with a trailer always has its
    record here, with the same counts and chained digest.
    """

    # No foreign key: the record outlives nothing, but is read without joins.
    scope_id = models.CharField(max_length=256)
    session_id = models.CharField(  # noqa: DJ001
        max_length=256, null=True, blank=True
    )
    exported_by = models.CharField(max_length=150)
    exported_at = models.DateTimeField(help_text="The bundle's created_at.")
    finished_at = models.DateTimeField()
    via = models.CharField(max_length=16, help_text="http or command.")
    format_version = models.PositiveSmallIntegerField()
    records = models.BigIntegerField(help_text="Lines, manifest and trailer included.")
    counts = models.JSONField(help_text="Records per kind, as in the manifest.")
    chain = models.CharField(max_length=64, help_text="The trailer's chained digest.")
    request_id = models.CharField(max_length=16)

    class Meta:
        indexes = [
            models.Index(fields=["scope_id", "id"], name="lifecycle_export_scope_idx"),
        ]

    def __str__(self) -> str:
        where = self.scope_id if self.session_id is None else self.session_id
        return f"export of {where} at {self.exported_at}"
