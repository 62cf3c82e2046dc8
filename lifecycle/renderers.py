"""Wire shapes of the lifecycle answers, from domain objects (no queries)."""

from __future__ import annotations

from typing import Any

from powercontext.text import format_datetime
from sources.models import SessionClosure

from .models import LegalHold, LegalHoldRelease
from .services import PurgeResult, RedactionRun


def closure_body(closure: SessionClosure) -> dict[str, Any]:
    return {
        "scope_id": closure.scope_id,
        "session_id": closure.session_id,
        "closed_at": format_datetime(closure.closed_at),
        "closed_by": closure.closed_by,
    }


def hold_body(hold: LegalHold) -> dict[str, Any]:
    """A hold read with ``select_related("release")``."""
    release: LegalHoldRelease | None = getattr(hold, "release", None)
    released_at = None if release is None else release.released_at
    return {
        "hold_id": hold.hold_id,
        "scope_id": hold.scope_id,
        "session_id": hold.session_id,
        "reason": hold.reason,
        "set_by": hold.set_by,
        "set_at": format_datetime(hold.set_at),
        "released_at": None if released_at is None else format_datetime(released_at),
        "released_by": None if release is None else release.released_by,
    }


def purge_body(result: PurgeResult) -> dict[str, Any]:
    return dict(vars(result))


def redaction_run_body(run: RedactionRun) -> dict[str, Any]:
    """``schemas.RedactionRun``."""
    return {
        "dry_run": run.dry_run,
        "complete": run.complete,
        "redacted": [
            {
                "source_type": s.source_type,
                "source_id": s.source_id,
                "position": s.position,
                "redaction_id": s.redaction_id,
            }
            for s in run.redacted
        ],
        "envelopes": run.envelopes,
        "held": [
            {
                "source_type": s.source_type,
                "source_id": s.source_id,
                "position": s.position,
                "scope_held": s.scope_held,
                "held_sessions": s.held_sessions,
            }
            for s in run.held
        ],
        "held_envelopes": run.held_envelopes,
    }
