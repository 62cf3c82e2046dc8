"""Memory records: what a client asked the service to remember (``remember_memory``).

One row per remembered fact, insert-only: this service has no operation that
revises, retires or merges a record, so every record stays ``active`` at revision 1
and state version 0 (the reference's shape for a new Atomic Memory). The reference
client's list, search and exact read (``/v1/memory/*``) read these rows.
"""

from __future__ import annotations

from django.db import models

from powercontext.db.immutable import ImmutableModel

from .scopes import Scope


class MemoryRecord(ImmutableModel):
    """One remembered fact of a scope, immutable once stored.

    ``text`` is stored normalized (surrounding whitespace removed, Unicode NFC), as
    the reference stores it; ``kind`` exactly as sent. ``artifact_id`` is
    server-generated (``art_`` + 32 hex digits) and orders the scope's list.
    """

    # Indexed by sources_memory_identity_uniq, which leads with it.
    scope = models.ForeignKey(
        Scope, on_delete=models.PROTECT, related_name="memories", db_index=False
    )
    artifact_id = models.CharField(max_length=64)
    kind = models.CharField(max_length=128)
    text = models.TextField()
    reason = models.CharField(max_length=512, null=True, blank=True)  # noqa: DJ001
    created_at = models.DateTimeField()
    created_by = models.CharField(max_length=150)
    request_id = models.CharField(max_length=16)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["scope", "artifact_id"], name="sources_memory_identity_uniq"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.scope_id}/{self.artifact_id}"
