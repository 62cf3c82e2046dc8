"""Session envelopes, their append-only revisions, and the values revisions point at.

``SessionEnvelope`` is the live row, keyed by ``(scope, session_id)``: the whole
``meta`` in one JSON column so that a read is one indexed query. Every accepted
write also appends an ``EnvelopeRevision``. A revision keeps small values in its
own row and refers to the others - and to the notes, whatever their size - by the
SHA-256 digest of an ``EnvelopeValue``, stored once per envelope and use (the notes,
or the other keys): a 512 KiB persona snapshot that does not change is stored once,
not once per write (docs/decisions/0101-envelope-revisions.md,
0032-erasure-and-holds.md).

Revisions and values are never updated. They are guarded in layers: the write
services are their only writers; ``save()`` refuses updates; their QuerySets
refuse ``update()`` and ``delete()`` (retention pruning deletes through
``delete_pruned``); the admin is read-only; and on PostgreSQL triggers reject
UPDATE from any client and DELETE of an envelope's latest revision (migration
``0002_append_only_triggers``).
"""

from __future__ import annotations

from django.db import models

from powercontext.db.immutable import AppendOnlyModel
from powercontext.jsonvalues import StoredJSONDecoder
from sources.models import Scope

from .meta_keys import Owner


class WriteOperation(models.TextChoices):
    REPLACE = "replace", "host replace (PUT envelope)"
    OVERLAY = "overlay", "worker overlay (PATCH envelope)"
    NOTES_PUT = "notes_put", "working notes written"
    NOTES_CLEAR = "notes_clear", "working notes cleared"
    NOTES_ERASED = "notes_erased", "working notes erased (purge or redaction)"


class SessionEnvelope(models.Model):
    # No index of its own: the identity constraint's index leads with scope.
    scope = models.ForeignKey(
        Scope,
        on_delete=models.PROTECT,
        related_name="session_envelopes",
        db_index=False,
    )
    session_id = models.CharField(max_length=256)
    meta = models.JSONField(default=dict, decoder=StoredJSONDecoder)
    version = models.PositiveBigIntegerField(
        help_text="1 at creation, +1 per accepted write; the strong ETag."
    )
    notes_version = models.PositiveBigIntegerField(
        null=True,
        blank=True,
        help_text="The version that wrote the current working notes (null: none).",
    )
    clock = models.BigIntegerField(
        help_text="Monotonic write clock in ms: max(previous + 1, now)."
    )
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "session_id"], name="sessions_envelope_identity_uniq"
            ),
            models.CheckConstraint(
                condition=models.Q(version__gte=1),
                name="sessions_envelope_version_gte1",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.scope_id} / {self.session_id} @v{self.version}"


class EnvelopeValue(AppendOnlyModel):
    """One meta value of one envelope, addressed by the digest of its canonical JSON
    and by its use: the working notes' values are rows of their own (``for_notes``),
    never shared with another key holding the same value, so erasing a notes text
    (purge, redaction) deletes only what the notes used and never a value that
    another key's revisions still refer to."""

    envelope = models.ForeignKey(
        SessionEnvelope,
        on_delete=models.PROTECT,
        related_name="stored_values",
        db_index=False,  # served by the (envelope, digest) constraint's index
    )
    digest = models.CharField(
        max_length=64, help_text="Hex SHA-256 of the value's RFC 8785 JSON."
    )
    value = models.JSONField(decoder=StoredJSONDecoder)
    for_notes = models.BooleanField(
        default=False,
        help_text="The working notes' value (else any other key's).",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["envelope", "for_notes", "digest"],
                name="sessions_value_use_digest_uniq",
            ),
        ]

    def __str__(self) -> str:
        use = "notes" if self.for_notes else "meta"
        return f"{self.envelope_id}:{use}:{self.digest[:12]}"


class EnvelopeRevision(AppendOnlyModel):
    """The envelope as one accepted write left it, with who wrote it and how."""

    envelope = models.ForeignKey(
        SessionEnvelope,
        on_delete=models.PROTECT,
        related_name="revisions",
        db_index=False,  # served by the (envelope, version) constraint's index
    )
    version = models.PositiveBigIntegerField()
    clock = models.BigIntegerField()
    writer = models.CharField(max_length=8, choices=[(o.value, o.value) for o in Owner])
    operation = models.CharField(max_length=16, choices=WriteOperation.choices)
    principal = models.CharField(max_length=150)
    request_id = models.CharField(max_length=16)
    created_at = models.DateTimeField()
    value_digests = models.JSONField(
        decoder=StoredJSONDecoder,
        help_text="Keys stored by reference: {key: digest of an EnvelopeValue}.",
    )
    inline_values = models.JSONField(
        default=dict,
        decoder=StoredJSONDecoder,
        help_text="Keys stored in the row: {key: small value}.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["envelope", "version"], name="sessions_revision_version_uniq"
            ),
        ]
        indexes = [
            models.Index(fields=["created_at"], name="sessions_revision_created_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.envelope_id}@v{self.version} ({self.writer})"
