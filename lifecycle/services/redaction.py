"""Redaction: one Source tombstoned on request, with its copies in envelopes.

For legal erasure requests (docs/api.md): any Source, a plain one too,
becomes a tombstone exactly as purge makes them, whether or not a handoff cites
it (a committed citation then resolves ``purged``, never to other content). The
same text kept as working notes in the scope's envelopes, live or in revisions,
is erased with it. Capture attempts keep digests only, never text.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.db import transaction
from django.utils import timezone

from powercontext.canonical import canonical_sha256
from powercontext.jsonvalues import stored_json_loads
from powercontext.principals import Principal
from sessions_app.services import envelope_notes_erase, envelopes_holding
from sources.exceptions import SourceNotFound
from sources.models import ContentSource
from sources.selectors import audit_get, scope_require
from sources.services import sources_tombstone

from ..exceptions import LegalHoldActive
from ..identifiers import new_id
from ..models import Redaction
from ..selectors import holds_covering


def source_redact(
    *,
    principal: Principal,
    scope_id: str,
    source_type: str,
    source_id: str,
    reason: str,
    request_id: str,
) -> dict[str, Any]:
    """Tombstone the Source and erase its text from the scope's envelopes;
    returns its audit row (``sources.selectors.audit_get``). A Source that is a
    tombstone already is returned as it is, and nothing is recorded.

    Raises ``SourceNotFound`` / ``ScopeNotFound``, and ``LegalHoldActive``
    (details: ``scope_held``, ``held_sessions``) while a hold covers any copy of
    the text: the scope, the Source's session, or the session of an envelope
    whose notes hold the same text, live or in a revision - a redaction erases
    every copy or none. One durable transaction holding the Source row's lock,
    then each affected envelope's row lock.
    """
    with transaction.atomic(durable=True):
        source = (
            ContentSource.objects.select_for_update()
            .filter(scope_id=scope_id, source_type=source_type, source_id=source_id)
            .only("pk", "scope_id", "session_id", "content", "purged_at")
            .first()
        )
        if source is None:
            scope_require(scope_id=scope_id)
            raise SourceNotFound()
        if source.purged_at is None and source.content is not None:
            redact_locked(source, reason, principal, request_id)
        else:
            _refuse_if_held(scope_id, [source.session_id] if source.session_id else [])
    return audit_get(scope_id=scope_id, source_type=source_type, source_id=source_id)


def redact_locked(
    source: ContentSource, reason: str, principal: Principal, request_id: str
) -> str:
    """In the caller's transaction, the Source's row locked: refuse
    (``LegalHoldActive``) when a hold covers any copy of the text, else the
    tombstone, its record, the envelopes. Returns the redaction id."""
    assert source.content is not None
    scope_id = source.scope_id
    digests = {canonical_sha256(stored_json_loads(source.content))}
    envelopes = envelopes_holding(scope_id=scope_id, digests=digests)
    copies = {envelope.session_id for envelope in envelopes}
    if source.session_id is not None:
        copies.add(source.session_id)
    _refuse_if_held(scope_id, copies)
    # Envelopes first: their lock comes before a Source row's change, the order
    # of every envelope write that captures a note.
    for envelope in envelopes:
        envelope_notes_erase(
            envelope=envelope,
            digests=digests,
            principal=principal,
            request_id=request_id,
        )
    redaction_id, now = new_id("red"), timezone.now()
    sources_tombstone(ids=[source.pk], run_id=redaction_id, now=now)
    Redaction.objects.create(
        redaction_id=redaction_id,
        scope_id=scope_id,
        source_id=source.pk,
        reason=reason,
        redacted_by=principal.name,
        redacted_at=now,
        request_id=request_id,
    )
    return redaction_id


def _refuse_if_held(scope_id: str, session_ids: Collection[str]) -> None:
    """``LegalHoldActive`` naming the holds when one covers the scope or any of
    ``session_ids`` (the sessions holding a copy of the text)."""
    held = holds_covering(scope_id=scope_id, session_ids=session_ids)
    if held:
        raise LegalHoldActive(details=held.details())
