"""Scopes and the per-scope journal head.

A Scope is the container every Source lives in; it must exist before anything is
captured into it. ``SourceJournalHead`` holds the last position handed out in a
scope: capture locks that one row, so positions are gap-free per scope.
"""

from __future__ import annotations

from django.db import models


class Scope(models.Model):
    scope_id = models.CharField(primary_key=True, max_length=256)
    title = models.CharField(max_length=256)
    summary = models.CharField(max_length=2000)
    parent = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="children",
        db_column="parent_scope_id",
    )
    version = models.PositiveIntegerField(default=1)
    idempotency_key = models.CharField(max_length=256)
    request_digest = models.CharField(
        max_length=64,
        help_text="SHA-256 of the creation parameters, for idempotent replays.",
    )
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField()
    request_id = models.CharField(max_length=16)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["created_by", "idempotency_key"],
                name="sources_scope_idempotency_uniq",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.scope_id} ({self.title})"


class ScopeContextReference(models.Model):
    # Indexed by sources_ctxref_ordinal_uniq, which leads with it.
    scope = models.ForeignKey(
        Scope, on_delete=models.CASCADE, related_name="context_refs", db_index=False
    )
    ordinal = models.PositiveSmallIntegerField()
    referenced = models.ForeignKey(Scope, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["scope", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "ordinal"], name="sources_ctxref_ordinal_uniq"
            ),
            models.UniqueConstraint(
                fields=["scope", "referenced"], name="sources_ctxref_target_uniq"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.scope_id} -> {self.referenced_id}"


class ScopeExternalReference(models.Model):
    # Indexed by sources_extref_ordinal_uniq, which leads with it.
    scope = models.ForeignKey(
        Scope, on_delete=models.CASCADE, related_name="external_refs", db_index=False
    )
    ordinal = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=128)
    value = models.CharField(max_length=2000)

    class Meta:
        ordering = ["scope", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "ordinal"], name="sources_extref_ordinal_uniq"
            ),
            models.UniqueConstraint(
                fields=["scope", "kind", "value"], name="sources_extref_uniq"
            ),
        ]
        indexes = [
            models.Index(fields=["kind", "scope"], name="sources_extref_kind_idx")
        ]

    def __str__(self) -> str:
        return f"{self.kind}:{self.value}"


class SourceJournalHead(models.Model):
    """The last position used in a scope's journal (0 before the first Source)."""

    scope = models.OneToOneField(
        Scope, primary_key=True, on_delete=models.PROTECT, related_name="journal_head"
    )
    last_position = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.scope_id}@{self.last_position}"
