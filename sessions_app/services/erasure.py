"""Erasure of working-notes text from envelopes, for purge and redaction.

Notes always go to revisions by reference (one ``EnvelopeValue`` row per text,
``for_notes`` set, ``writes._by_reference``), so erasing a text is: remove it
from the live meta when it is there (a new version and a ``notes_erased``
revision, through the one envelope write path), then delete its notes value
rows. Older revisions keep the digest, and their meta shows that key as erased
(``selectors.revision_meta``). A value row of another key with the same digest
is another use of the same bytes - host data, not a copy of the notes - and is
never deleted here: its revisions keep their value.

Both functions run in the caller's transaction (``lifecycle.services``) and hold
the envelope row lock from the write on, the lock every envelope write and the
retention prune take, so no write references a value while it is deleted.
"""

from __future__ import annotations

from collections.abc import Collection

from django.db.models import Exists, OuterRef, Q

from powercontext.canonical import canonical_sha256
from powercontext.principals import Principal

from ..meta_keys import WORKING_NOTES_KEY, Owner
from ..models import EnvelopeValue, SessionEnvelope, WriteOperation
from .writes import Meta, Writer, envelope_write


def envelope_notes_erase(
    *,
    envelope: SessionEnvelope,
    digests: Collection[str] | None,
    principal: Principal,
    request_id: str,
) -> bool:
    """Erase from ``envelope`` the notes texts whose digest is in ``digests``
    (``None``: every notes text it ever held), also when its session is closed.
    Returns whether anything was erased."""

    def without_notes(current: Meta) -> Meta:
        notes = current.get(WORKING_NOTES_KEY)
        if notes is None or (
            digests is not None and canonical_sha256(notes) not in digests
        ):
            return current
        return {k: v for k, v in current.items() if k != WORKING_NOTES_KEY}

    written = envelope_write(
        scope_id=envelope.scope_id,
        session_id=envelope.session_id,
        if_match=None,
        change=without_notes,
        writer=Writer(Owner.WORKER, WriteOperation.NOTES_ERASED, principal, request_id),
        create=False,
        closed_too=True,
    )
    notes_values = EnvelopeValue.objects.filter(envelope_id=envelope.pk, for_notes=True)
    if digests is not None:
        notes_values = notes_values.filter(digest__in=sorted(digests))
    deleted, _ = notes_values.delete_pruned()
    return written.changed or deleted > 0


def notes_kept_condition() -> Q:
    """Envelopes with notes text to erase: in their meta, or a stored notes value."""
    return Q(meta__has_key=WORKING_NOTES_KEY) | Q(
        Exists(EnvelopeValue.objects.filter(envelope_id=OuterRef("pk"), for_notes=True))
    )


def envelopes_holding(
    *, scope_id: str, digests: Collection[str]
) -> list[SessionEnvelope]:
    """The scope's envelopes that store notes with one of ``digests``, by id."""
    stored = EnvelopeValue.objects.filter(
        envelope_id=OuterRef("pk"), for_notes=True, digest__in=sorted(digests)
    )
    return list(
        SessionEnvelope.objects.filter(Exists(stored), scope_id=scope_id).order_by("pk")
    )
