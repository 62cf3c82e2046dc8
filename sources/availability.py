"""Whether a Source is available to new consumers: decided here and nowhere else.

A Source is ``active`` unless a rule makes it unavailable. Today one rule exists:
a Working Note whose ``expires_at`` is not after the request's ``now`` is
``expired`` (invariant 4: its row stays readable for audit). The lifecycle
(handoff.md 3) adds ``closed`` and ``purged`` with the precedence ``purged >
closed > expired > active``; they take their place in both forms below.

Two forms of the one definition, which must agree:

- ``availability_of`` - the state of a row already read (audit records, evidence
  resolution);
- ``availability_condition`` - the same rule as a query filter (the audit
  ``state`` filter, the admin's filter).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from django.db.models import Q


class Availability(StrEnum):
    ACTIVE = "active"
    EXPIRED = "expired"


def availability_of(
    *, is_working_note: bool, expires_at: datetime | None, now: datetime
) -> Availability:
    """The availability of one Source row at ``now``."""
    if is_working_note and expires_at is not None and expires_at <= now:
        return Availability.EXPIRED
    return Availability.ACTIVE


def availability_condition(state: Availability, now: datetime) -> Q:
    """A filter on ``ContentSource`` rows in ``state`` at ``now``."""
    expired = Q(is_working_note=True, expires_at__lte=now)
    if state is Availability.EXPIRED:
        return expired
    return ~expired
