"""The handoff artifact of a scope: a head and its immutable revisions.

Every scope has at most one handoff artifact (its wire reference is always
``{"family": "handoff", "artifact_id": "handoff", "revision": N}``). A commit adds
revision N+1 and moves the head. A revision is immutable: its content (the RFC 8785
canonical JSON of the HandoffContent, digested), its statements and citations as
rows (for the admin and for "which handoffs cite this Source?"), and its lineage:
one row per cited Source, a ``PROTECT`` foreign key, so a Source a committed
revision cites can never be deleted - and the lifecycle work refuses to purge it.

Only ``HandoffHead`` changes (commit moves it, under a row lock); everything else is
written once (``ImmutableModel`` here, PostgreSQL triggers in migration 0002).
"""

from __future__ import annotations

from typing import TypeVar

from django.db import models

from powercontext.db.immutable import ImmutableModel, ImmutableQuerySet
from sources.models import ContentSource, Scope

_M = TypeVar("_M", bound=models.Model)


class ImmutableManager(models.Manager[_M]):
    """Typed per model (mypy's Django plugin cannot type the inherited
    ``ImmutableModel.objects`` outside its own module); refuses bulk changes like
    it, through ``ImmutableQuerySet``."""

    def get_queryset(self) -> models.QuerySet[_M]:
        return ImmutableQuerySet(self.model, using=self._db)


class HandoffDisposition(models.TextChoices):
    CONTINUABLE = "continuable"
    BLOCKED = "blocked"
    COMPLETE = "complete"


class HandoffHead(models.Model):
    """The current revision of a scope's handoff artifact (None before the first).

    Created on the first commit; every commit locks this row, which serialises
    commits per scope.
    """

    scope = models.OneToOneField(
        Scope, primary_key=True, on_delete=models.PROTECT, related_name="handoff_head"
    )
    current = models.ForeignKey(
        "HandoffRevision",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
    )
    updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "handoff head"

    def __str__(self) -> str:
        number = self.current.revision if self.current_id else 0  # type: ignore[union-attr]
        return f"{self.scope_id} handoff @{number}"


class HandoffRevision(ImmutableModel):
    """One committed handoff: the content exactly as stored, and who wrote it."""

    objects = ImmutableManager()  # type: ignore[assignment,misc]

    # Indexed by handoffs_revision_number_uniq, which leads with it.
    scope = models.ForeignKey(
        Scope,
        on_delete=models.PROTECT,
        related_name="handoff_revisions",
        db_index=False,
    )
    revision = models.PositiveBigIntegerField()
    content = models.TextField(
        help_text="RFC 8785 canonical JSON of the HandoffContent."
    )
    content_digest = models.CharField(max_length=71)
    objective = models.TextField()
    disposition = models.CharField(max_length=16, choices=HandoffDisposition.choices)
    created_at = models.DateTimeField()
    created_by = models.CharField(max_length=150)
    request_id = models.CharField(max_length=16)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "revision"], name="handoffs_revision_number_uniq"
            ),
            models.CheckConstraint(
                condition=models.Q(revision__gte=1),
                name="handoffs_revision_number_positive",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.scope_id} handoff revision {self.revision}"


class StatementClaim(models.TextChoices):
    STATE = "state"
    NEXT_ACTION = "next_action"
    OMISSION = "omission"


class HandoffStatement(ImmutableModel):
    """A state statement, the next action, or an omission of a revision.

    ``ordinal`` is the index within its claim (``state[ordinal]``,
    ``omissions[ordinal]``; 0 for the next action).
    """

    objects = ImmutableManager()  # type: ignore[assignment,misc]

    # Indexed by handoffs_statement_place_uniq, which leads with it.
    revision = models.ForeignKey(
        HandoffRevision,
        on_delete=models.PROTECT,
        related_name="statements",
        db_index=False,
    )
    claim = models.CharField(max_length=16, choices=StatementClaim.choices)
    ordinal = models.PositiveSmallIntegerField()
    text = models.TextField()

    class Meta:
        ordering = ["revision", "claim", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["revision", "claim", "ordinal"],
                name="handoffs_statement_place_uniq",
            ),
            models.CheckConstraint(
                condition=~models.Q(claim="next_action") | models.Q(ordinal=0),
                name="handoffs_statement_one_next_action",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.claim}[{self.ordinal}]"


class CitationKind(models.TextChoices):
    SOURCE = "source"
    ARTIFACT = "artifact"


class HandoffCitation(ImmutableModel):
    """One citation of a statement: a Source identity or a handoff revision."""

    objects = ImmutableManager()  # type: ignore[assignment,misc]

    # Indexed by handoffs_citation_place_uniq, which leads with it.
    statement = models.ForeignKey(
        HandoffStatement,
        on_delete=models.PROTECT,
        related_name="citations",
        db_index=False,
    )
    ordinal = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=16, choices=CitationKind.choices)
    # NULL (not "") for the other kind's columns: the check constraint says which.
    source_type = models.CharField(max_length=256, null=True, blank=True)  # noqa: DJ001
    source_id = models.CharField(max_length=256, null=True, blank=True)  # noqa: DJ001
    artifact_family = models.CharField(  # noqa: DJ001
        max_length=128, null=True, blank=True
    )
    artifact_id = models.CharField(max_length=128, null=True, blank=True)  # noqa: DJ001
    artifact_revision = models.PositiveBigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["statement", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["statement", "ordinal"], name="handoffs_citation_place_uniq"
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(
                        kind="source",
                        source_type__isnull=False,
                        source_id__isnull=False,
                        artifact_family__isnull=True,
                        artifact_id__isnull=True,
                        artifact_revision__isnull=True,
                    )
                    | models.Q(
                        kind="artifact",
                        source_type__isnull=True,
                        source_id__isnull=True,
                        artifact_family__isnull=False,
                        artifact_id__isnull=False,
                        artifact_revision__isnull=False,
                    )
                ),
                name="handoffs_citation_kind_fields",
            ),
        ]
        indexes = [
            # The admin's "which handoffs cite this Source?" search.
            models.Index(fields=["source_id"], name="handoffs_citation_source_idx"),
        ]

    def __str__(self) -> str:
        if self.kind == CitationKind.SOURCE:
            return f"source {self.source_type}/{self.source_id}"
        return (
            f"artifact {self.artifact_family}/{self.artifact_id}"
            f"@{self.artifact_revision}"
        )


class HandoffLineage(ImmutableModel):
    """A Source pinned by a revision: cited by its state or next action.

    ``ordinal`` is the first-seen order (``CommittedHandoff.source_refs``).
    """

    objects = ImmutableManager()  # type: ignore[assignment,misc]

    # Indexed by handoffs_lineage_place_uniq, which leads with it.
    revision = models.ForeignKey(
        HandoffRevision,
        on_delete=models.PROTECT,
        related_name="lineage",
        db_index=False,
    )
    source = models.ForeignKey(
        ContentSource, on_delete=models.PROTECT, related_name="handoff_lineage"
    )
    ordinal = models.PositiveSmallIntegerField()

    class Meta:
        verbose_name_plural = "handoff lineage"
        ordering = ["revision", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["revision", "source"], name="handoffs_lineage_source_uniq"
            ),
            models.UniqueConstraint(
                fields=["revision", "ordinal"], name="handoffs_lineage_place_uniq"
            ),
        ]

    def __str__(self) -> str:
        return f"revision #{self.revision_id} pins source #{self.source_id}"
