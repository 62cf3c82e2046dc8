"""Legal holds: set and release, each an append-only record (docs/api.md)."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from powercontext.principals import Principal
from sources.selectors import scope_require

from ..identifiers import new_id
from ..models import LegalHold, LegalHoldRelease
from ..selectors import hold_get


def hold_set(
    *,
    principal: Principal,
    scope_id: str,
    session_id: str | None,
    reason: str,
    request_id: str,
) -> LegalHold:
    """Hold the scope (``session_id`` None) or one session of it. Not idempotent:
    each call is a new hold. Raises ``ScopeNotFound``. One durable transaction."""
    with transaction.atomic(durable=True):
        scope_require(scope_id=scope_id)
        return LegalHold.objects.create(
            hold_id=new_id("hold"),
            scope_id=scope_id,
            session_id=session_id,
            reason=reason,
            set_by=principal.name,
            set_at=timezone.now(),
            request_id=request_id,
        )


def hold_release(
    *,
    principal: Principal,
    scope_id: str,
    hold_id: str,
    reason: str,
    request_id: str,
) -> LegalHold:
    """Release the hold; releasing a released hold returns it unchanged (the first
    release stays). Raises ``LegalHoldNotFound`` or ``ScopeNotFound``."""
    hold = hold_get(scope_id=scope_id, hold_id=hold_id)
    if _released(hold):
        return hold
    try:
        with transaction.atomic(durable=True):
            LegalHoldRelease.objects.create(
                hold=hold,
                reason=reason,
                released_by=principal.name,
                released_at=timezone.now(),
                request_id=request_id,
            )
    except IntegrityError:
        # A concurrent release won (the one-to-one column is unique): it stays.
        if not _released(hold_get(scope_id=scope_id, hold_id=hold_id)):
            raise
    return hold_get(scope_id=scope_id, hold_id=hold_id)


def _released(hold: LegalHold) -> bool:
    return LegalHoldRelease.objects.filter(hold=hold).exists()
