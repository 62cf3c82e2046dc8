"""Redaction: one Source tombstoned on request, with its copies in envelopes.

For legal erasure requests (spec/handoff.md 3): any Source, a plain one too,
becomes a tombstone exactly as purge makes them, whether or not a handoff cites
it (a committed citation then resolves ``purged``, never to other content). The
same text kept as working notes in the scope's envelopes, live or in revisions,
is erased with it. Capture attempts keep digests only, never text.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from powercontext.canonical import canonical_sha256
from powercontext.jsonvalues import stored_json_loads
from powercontext.principals import Principal
from sessions_app.models import SessionEnvelope
from sessions_app.services import envelope_notes_erase, envelopes_holding
from sources.exceptions import SourceNotFound
from sources.models import ContentSource
from sources.selectors import audit_get, scope_require
from sources.services import sources_tombstone

from ..exceptions import LegalHoldActive
from ..identifiers import new_id
from ..models import Redaction
from ..selectors import hold_applies


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

    Raises ``SourceNotFound`` / ``ScopeNotFound``, and ``LegalHoldActive`` while a
    hold covers the scope or the note's session. One durable transaction holding
    the Source row's lock, then each affected envelope's row lock.
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
        if hold_applies(scope_id=scope_id, session_id=source.session_id):
            raise LegalHoldActive()
        if source.purged_at is None and source.content is not None:
            _redact(source, reason, principal, request_id)
    return audit_get(scope_id=scope_id, source_type=source_type, source_id=source_id)


def _redact(
    source: ContentSource, reason: str, principal: Principal, request_id: str
) -> None:
    """In the caller's transaction: the tombstone, its record, the envelopes."""
    assert source.content is not None
    scope_id = source.scope_id
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
    digests = {canonical_sha256(stored_json_loads(source.content))}
    for envelope_id in envelopes_holding(scope_id=scope_id, digests=digests):
        envelope_notes_erase(
            envelope=SessionEnvelope.objects.get(pk=envelope_id),
            digests=digests,
            principal=principal,
            request_id=request_id,
        )
