"""Reads of lifecycle records, and the rule of what a hold covers.

A hold covers every Source and envelope of its scope (``session_id`` NULL) or
of its one session, until it is released; several holds stack, each blocking
until its own release. ``held_condition`` is that rule as a filter on Sources,
``hold_applies`` as a check of one scope and session.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet

from powercontext.pages import Page, Position, keyset_page
from sources.selectors import scope_require

from .exceptions import LegalHoldNotFound
from .models import LegalHold


@dataclass(frozen=True)
class HeldCopies:
    """What holds cover among some sessions of a scope: the whole scope, or these
    sessions (sorted; every one of them when the scope is held)."""

    scope_held: bool
    sessions: list[str]

    def __bool__(self) -> bool:
        return self.scope_held or bool(self.sessions)

    def details(self) -> dict[str, Any]:
        """The ``legal_hold`` error's details."""
        return {"scope_held": self.scope_held, "held_sessions": self.sessions}


def _active_holds() -> QuerySet[LegalHold]:
    return LegalHold.objects.filter(release__isnull=True)


def held_condition(session_field: str = "session_id") -> Q:
    """Rows (Sources, or envelopes) whose scope or session an active hold covers."""
    return Q(
        Exists(
            _active_holds().filter(
                Q(session_id__isnull=True) | Q(session_id=OuterRef(session_field)),
                scope_id=OuterRef("scope_id"),
            )
        )
    )


def hold_applies(*, scope_id: str, session_id: str | None) -> bool:
    """Whether an active hold covers the scope, or this session of it. One query."""
    covering = Q(session_id__isnull=True)
    if session_id is not None:
        covering |= Q(session_id=session_id)
    return _active_holds().filter(covering, scope_id=scope_id).exists()


def holds_covering(*, scope_id: str, session_ids: Collection[str]) -> HeldCopies:
    """Which of ``session_ids`` an active hold covers, and whether one covers the
    whole scope. One query."""
    covering = _active_holds().filter(
        Q(session_id__isnull=True) | Q(session_id__in=sorted(set(session_ids))),
        scope_id=scope_id,
    )
    held = set(covering.values_list("session_id", flat=True))
    scope_held = None in held
    return HeldCopies(
        scope_held=scope_held,
        sessions=sorted(
            set(session_ids) if scope_held else {s for s in held if s is not None}
        ),
    )


def hold_get(*, scope_id: str, hold_id: str) -> LegalHold:
    """One hold with its release; ``LegalHoldNotFound`` or ``ScopeNotFound``."""
    hold = (
        LegalHold.objects.select_related("release")
        .filter(scope_id=scope_id, hold_id=hold_id)
        .first()
    )
    if hold is None:
        scope_require(scope_id=scope_id)
        raise LegalHoldNotFound()
    return hold


def hold_page(*, scope_id: str, position: Position | None, limit: int) -> Page[Any]:
    """The scope's holds, newest first, released ones too; ``ScopeNotFound``."""
    holds = LegalHold.objects.select_related("release").filter(scope_id=scope_id)
    if position is not None:
        holds = holds.filter(pk__lt=position["before"])
    rows = list(holds.order_by("-pk")[: limit + 1])
    if not rows and position is None:
        scope_require(scope_id=scope_id)
    return keyset_page(rows, limit, lambda hold: {"before": hold.pk})
