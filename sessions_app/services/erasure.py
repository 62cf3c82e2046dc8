"""Erasure of working-notes text from envelopes, for purge and redaction.

Notes always go to revisions by reference (one ``EnvelopeValue`` row per text,
``writes._by_reference``), so erasing a text is: remove it from the live meta
when it is there (a new version and a ``notes_erased`` revision, through the one
envelope write path), then delete its value rows. Older revisions keep the
digest, and their meta shows that key as erased (``selectors.revision_meta``).

Both functions run in the caller's transaction (``lifecycle.services``) and hold
the envelope row lock from the write on, the lock every envelope write and the
retention prune take, so no write references a value while it is deleted.
"""

from __future__ import annotations

from collections.abc import Collection

from django.db.models import Exists, OuterRef, Q
from django.db.models.fields.json import KT

from powercontext.canonical import canonical_sha256
from powercontext.principals import Principal

from ..meta_keys import WORKING_NOTES_KEY, Owner
from ..models import EnvelopeRevision, EnvelopeValue, SessionEnvelope, WriteOperation
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
    erased = set(_notes_digests(envelope.pk) if digests is None else digests)
    deleted, _ = EnvelopeValue.objects.filter(
        envelope_id=envelope.pk, digest__in=sorted(erased)
    ).delete_pruned()
    return written.changed or deleted > 0


def notes_kept_condition() -> Q:
    """Envelopes with notes text to erase: in their meta, or a stored value a
    revision refers to as notes."""
    notes_digests = (
        EnvelopeRevision.objects.filter(envelope_id=OuterRef(OuterRef("pk")))
        .annotate(notes=KT(f"value_digests__{WORKING_NOTES_KEY}"))
        .values("notes")
    )
    return Q(meta__has_key=WORKING_NOTES_KEY) | Q(
        Exists(
            EnvelopeValue.objects.filter(
                envelope_id=OuterRef("pk"), digest__in=notes_digests
            )
        )
    )


def envelopes_holding(
    *, scope_id: str, digests: Collection[str]
) -> list[SessionEnvelope]:
    """The scope's envelopes that store a value with one of ``digests``, by id."""
    stored = EnvelopeValue.objects.filter(
        envelope_id=OuterRef("pk"), digest__in=sorted(digests)
    )
    return list(
        SessionEnvelope.objects.filter(Exists(stored), scope_id=scope_id).order_by("pk")
    )


def _notes_digests(envelope_id: int) -> set[str]:
    """Every digest a revision of the envelope refers to for its notes."""
    return {
        digests[WORKING_NOTES_KEY]
        for digests in EnvelopeRevision.objects.filter(
            envelope_id=envelope_id
        ).values_list("value_digests", flat=True)
        if WORKING_NOTES_KEY in digests
    }
