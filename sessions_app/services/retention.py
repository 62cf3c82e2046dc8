"""Retention of envelope revisions: ``SESSION_REVISION_RETENTION`` (default 30 days).

Revisions older than the retention are deleted, except each envelope's latest
one, and then the stored values no remaining revision references. Each envelope
is pruned in its own short transaction holding its row lock - the lock every
envelope write takes - so a write never references a value while it is deleted.

An envelope a legal hold covers (its scope or its session) keeps every revision
and value while the hold lasts: pruning is erasure too, and nothing a hold
covers is erased. Its old revisions are pruned by the first run after release.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from lifecycle.selectors import held_condition, hold_applies

from ..meta_keys import WORKING_NOTES_KEY
from ..models import EnvelopeRevision, EnvelopeValue, SessionEnvelope

_DELETE_CHUNK = 500


@dataclass(frozen=True)
class PruneResult:
    envelopes: int
    revisions: int
    values: int
    skipped_held: int = 0


def envelope_revisions_prune(
    *, progress: Callable[[int, int], None] | None = None
) -> PruneResult:
    """Delete revisions created before ``now - SESSION_REVISION_RETENTION``.

    Never deletes the revision that is its envelope's current version, never a
    value a remaining revision references, and nothing of an envelope a legal
    hold covers (counted in ``skipped_held``; checked again under the row lock,
    so a hold set during the run stops the envelopes it has not reached). Takes
    each affected envelope's row lock in turn (one durable transaction per
    envelope). Calls ``progress(done, total)`` before the first envelope and
    after each. Returns the counts.
    """
    cutoff = timezone.now() - settings.SESSION_REVISION_RETENTION
    old = EnvelopeRevision.objects.filter(
        envelope_id=OuterRef("pk"), created_at__lt=cutoff
    ).exclude(version=OuterRef("version"))
    prunable = SessionEnvelope.objects.filter(Exists(old))
    skipped_held = prunable.filter(held_condition()).count()
    envelope_ids = list(
        prunable.exclude(held_condition()).order_by("pk").values_list("pk", flat=True)
    )
    report = progress or (lambda done, total: None)
    report(0, len(envelope_ids))
    envelopes = revisions = values = 0
    for done, envelope_id in enumerate(envelope_ids, start=1):
        pruned = _prune_envelope(envelope_id, cutoff)
        if pruned is None:
            skipped_held += 1
        else:
            envelopes += 1
            revisions += pruned[0]
            values += pruned[1]
        report(done, len(envelope_ids))
    return PruneResult(
        envelopes=envelopes,
        revisions=revisions,
        values=values,
        skipped_held=skipped_held,
    )


def _prune_envelope(envelope_id: int, cutoff: datetime) -> tuple[int, int] | None:
    """Prune one envelope: ``(revisions, values)`` deleted, None when held."""
    with transaction.atomic(durable=True):
        envelope = (
            SessionEnvelope.objects.select_for_update()
            .only("scope_id", "session_id", "version")
            .get(pk=envelope_id)
        )
        if hold_applies(scope_id=envelope.scope_id, session_id=envelope.session_id):
            return None
        version = envelope.version
        revisions, _ = EnvelopeRevision.objects.filter(
            envelope_id=envelope_id, created_at__lt=cutoff, version__lt=version
        ).delete_pruned()
        referenced: set[tuple[bool, str]] = set()
        for digests in EnvelopeRevision.objects.filter(
            envelope_id=envelope_id
        ).values_list("value_digests", flat=True):
            referenced.update(
                (key == WORKING_NOTES_KEY, digest) for key, digest in digests.items()
            )
        orphans = [
            pk
            for pk, for_notes, digest in EnvelopeValue.objects.filter(
                envelope_id=envelope_id
            ).values_list("pk", "for_notes", "digest")
            if (for_notes, digest) not in referenced
        ]
        for start in range(0, len(orphans), _DELETE_CHUNK):
            EnvelopeValue.objects.filter(
                pk__in=orphans[start : start + _DELETE_CHUNK]
            ).delete_pruned()
    return revisions, len(orphans)
