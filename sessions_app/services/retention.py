"""Retention of envelope revisions: ``SESSION_REVISION_RETENTION`` (default 30 days).

Revisions older than the retention are deleted, except each envelope's latest
one, and then the stored values no remaining revision references. Each envelope
is pruned in its own short transaction holding its row lock - the lock every
envelope write takes - so a write never references a value while it is deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from ..models import EnvelopeRevision, EnvelopeValue, SessionEnvelope

_DELETE_CHUNK = 500


@dataclass(frozen=True)
class PruneResult:
    envelopes: int
    revisions: int
    values: int


def envelope_revisions_prune(
    *, progress: Callable[[int, int], None] | None = None
) -> PruneResult:
    """Delete revisions created before ``now - SESSION_REVISION_RETENTION``.

    Never deletes the revision that is its envelope's current version, and never a
    value a remaining revision references. Takes each affected envelope's row
    lock in turn (one durable transaction per envelope). Calls ``progress(done,
    total)`` before the first envelope and after each. Returns the counts.
    """
    cutoff = timezone.now() - settings.SESSION_REVISION_RETENTION
    envelope_ids = list(
        EnvelopeRevision.objects.filter(created_at__lt=cutoff)
        .exclude(version=F("envelope__version"))
        .order_by("envelope_id")
        .values_list("envelope_id", flat=True)
        .distinct()
    )
    report = progress or (lambda done, total: None)
    report(0, len(envelope_ids))
    revisions = values = 0
    for done, envelope_id in enumerate(envelope_ids, start=1):
        pruned_revisions, pruned_values = _prune_envelope(envelope_id, cutoff)
        revisions += pruned_revisions
        values += pruned_values
        report(done, len(envelope_ids))
    return PruneResult(envelopes=len(envelope_ids), revisions=revisions, values=values)


def _prune_envelope(envelope_id: int, cutoff: datetime) -> tuple[int, int]:
    with transaction.atomic(durable=True):
        version = (
            SessionEnvelope.objects.select_for_update()
            .filter(pk=envelope_id)
            .values_list("version", flat=True)
            .get()
        )
        revisions, _ = EnvelopeRevision.objects.filter(
            envelope_id=envelope_id, created_at__lt=cutoff, version__lt=version
        ).delete_pruned()
        referenced: set[str] = set()
        for digests in EnvelopeRevision.objects.filter(
            envelope_id=envelope_id
        ).values_list("value_digests", flat=True):
            referenced.update(digests.values())
        orphans = [
            pk
            for pk, digest in EnvelopeValue.objects.filter(
                envelope_id=envelope_id
            ).values_list("pk", "digest")
            if digest not in referenced
        ]
        for start in range(0, len(orphans), _DELETE_CHUNK):
            EnvelopeValue.objects.filter(
                pk__in=orphans[start : start + _DELETE_CHUNK]
            ).delete_pruned()
    return revisions, len(orphans)
