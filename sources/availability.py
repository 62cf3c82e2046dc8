"""Whether a Source is available to new consumers: decided here and nowhere else.

A Source is ``active`` unless a rule makes it unavailable (docs/api.md), with
the precedence ``purged > closed > expired > active``:

- ``purged`` - the row is a tombstone (purge or redaction nulled its content);
- ``closed`` - a Working Note whose session was closed at or before ``now``;
- ``expired`` - a Working Note whose ``expires_at`` is not after ``now``.

Rows stay readable for audit in every state (invariant 4).

Two forms of the one definition, which must agree (a test compares them):

- ``availability_of`` - the state of a row already read (audit records, evidence
  resolution); the row's session close instant comes from
  ``session_closed_at()``, annotated by the reader;
- ``availability_condition`` - the same rule as a query filter (the audit
  ``state`` filter, the admin's filter, purge's candidates).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from django.db.models import Exists, OuterRef, Q, Subquery

from .models import SessionClosure


class Availability(StrEnum):
    ACTIVE = "active"
    EXPIRED = "expired"
    CLOSED = "closed"
    PURGED = "purged"


def availability_of(
    *,
    is_working_note: bool,
    expires_at: datetime | None,
    closed_at: datetime | None,
    purged_at: datetime | None,
    now: datetime,
) -> Availability:
    """The availability of one Source row at ``now``; ``closed_at`` is the close
    instant of its session (None when open or for a plain Source)."""
    if purged_at is not None:
        return Availability.PURGED
    if is_working_note and closed_at is not None and closed_at <= now:
        return Availability.CLOSED
    if is_working_note and expires_at is not None and expires_at <= now:
        return Availability.EXPIRED
    return Availability.ACTIVE


def availability_of_row(row: dict[str, Any], now: datetime) -> Availability:
    """``availability_of`` a row read with ``AVAILABILITY_FIELDS`` (and
    ``closed_at`` annotated by ``session_closed_at``)."""
    return availability_of(
        is_working_note=row["is_working_note"],
        expires_at=row["expires_at"],
        closed_at=row["closed_at"],
        purged_at=row["purged_at"],
        now=now,
    )


AVAILABILITY_FIELDS = ("is_working_note", "expires_at", "purged_at")


def session_closed_at(prefix: str = "") -> Subquery:
    """The close instant of the session of the ``ContentSource`` row (``prefix``
    names the relation it is reached through, e.g. ``"cited__"``), or NULL."""
    return Subquery(
        SessionClosure.objects.filter(
            scope_id=OuterRef(f"{prefix}scope_id"),
            session_id=OuterRef(f"{prefix}session_id"),
        ).values("closed_at")[:1]
    )


def availability_condition(state: Availability, now: datetime) -> Q:
    """A filter on ``ContentSource`` rows in ``state`` at ``now``."""
    purged = Q(purged_at__isnull=False)
    closed = Q(is_working_note=True) & Q(
        Exists(
            SessionClosure.objects.filter(
                scope_id=OuterRef("scope_id"),
                session_id=OuterRef("session_id"),
                closed_at__lte=now,
            )
        )
    )
    expired = Q(is_working_note=True, expires_at__lte=now)
    conditions = {
        Availability.PURGED: purged,
        Availability.CLOSED: ~purged & closed,
        Availability.EXPIRED: ~purged & ~closed & expired,
        Availability.ACTIVE: ~purged & ~closed & ~expired,
    }
    return conditions[state]
