"""The registry as a few dictionaries: what the HTTP API must agree with, step by step.

The model knows nothing of the service's code. It holds, per scope, the Sources in
journal order with the value each was first captured with, every capture attempt
per identity, and the session envelopes; each method applies one operation the way
``docs/api.md`` describes it and returns the status (and receipt) the API must
answer. The lifecycle (``docs/api.md``, "Lifecycle (ours)") is here too: a closed
session's notes are ``closed`` and it takes no new note and no envelope write; purge
and redaction leave tombstones (position, digest and value kept for the identity
rule, content gone) and erase notes texts from the envelopes (rules: ``lifecycle_rules.py``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import rfc8785

NOTE_KINDS = ("inspection", "abandoned_approach", "validation", "host_context")
# The envelope keys the machine writes, by owner (sessions-meta.md).
HOST_KEYS = ("selectedModel", "x-mark")
WORKER_KEYS = ("turnCursor", "workingNotes")


def canonical(value: Any) -> bytes:
    return rfc8785.dumps(value)


def content_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(canonical(content)).hexdigest()


@dataclass(frozen=True)
class Value:
    """A Source's value as the identity rule compares it (api.md, receipts)."""

    content: str
    metadata: Any = None
    working_note: bool = False
    session_id: str | None = None
    note_kind: str | None = None
    expires_at: datetime | None = None

    def key(self) -> bytes:
        expires = self.expires_at
        return canonical(
            {
                "content": self.content,
                "metadata": self.metadata or {},
                "working_note": self.working_note,
                "session_id": self.session_id,
                "note_kind": self.note_kind,
                "expires_us": None if expires is None else expires.timestamp() * 1e6,
            }
        )


@dataclass
class Source:
    source_id: str
    value: Value
    position: int
    purged_at: datetime | None = None

    def receipt(self) -> dict[str, Any]:
        source = {"name": "content", "source_id": self.source_id}
        return {"status": "accepted", "source": source, "position": self.position}

    def record(self, scope_id: str) -> dict[str, Any]:
        return {
            "receipt_identity": None,
            "scope_id": scope_id,
            "source_type": "content",
            "source_id": self.source_id,
            "content": None if self.purged_at else self.value.content,
            "position": self.position,
            "content_digest": content_digest(self.value.content),
        }

    def expired(self, now: datetime) -> bool:
        expires = self.value.expires_at
        return self.value.working_note and expires is not None and expires <= now

    def state(self, now: datetime, closed_at: datetime | None) -> str:
        """The availability, ``purged > closed > expired > active``;
        ``closed_at`` is the close instant of the note's session, if closed."""
        if self.purged_at is not None:
            return "purged"
        if self.value.working_note and closed_at is not None and closed_at <= now:
            return "closed"
        return "expired" if self.expired(now) else "active"


@dataclass
class Scope:
    scope_id: str
    sources: dict[str, Source] = field(default_factory=dict)
    attempts: dict[str, list[str]] = field(default_factory=dict)
    envelopes: dict[str, Envelope] = field(default_factory=dict)
    closed: dict[str, datetime] = field(default_factory=dict)

    def __repr__(self) -> str:  # hypothesis prints each drawn scope
        return f"Scope({self.scope_id!r})"

    @property
    def journal(self) -> list[Source]:
        return sorted(self.sources.values(), key=lambda source: source.position)

    def capture(
        self, source_id: str, value: Value, *, now: datetime
    ) -> tuple[int, Any]:
        """``(status, receipt or error code)`` of a capture that passed its checks
        up to the identity rule; the attempt is logged."""
        existing = self.sources.get(source_id)
        log = self.attempts.setdefault(source_id, [])
        if existing is not None:
            if existing.value.key() == value.key():
                log.append("replayed")
                return 202, existing.receipt()
            log.append("conflict")
            return 409, "source_conflict"
        expires = value.expires_at
        if value.working_note and expires is not None and expires <= now:
            log.append("rejected")
            return 422, "not_in_future"
        if value.working_note and value.session_id in self.closed:
            log.append("rejected")
            return 409, "session_closed"
        source = Source(source_id, value, len(self.sources) + 1)
        self.sources[source_id] = source
        log.append("accepted")
        return 202, source.receipt()

    def reject(self, source_id: str) -> None:
        """A capture refused by a domain rule before the identity rule."""
        self.attempts.setdefault(source_id, []).append("rejected")

    def window(self, after: int, limit: int) -> dict[str, Any]:
        items = [
            source.record(self.scope_id)
            for source in self.journal
            if source.position > after and not source.value.working_note
        ][:limit]
        high = len(self.sources)
        full = len(items) == limit
        next_after = items[-1]["position"] if full else high
        return {"items": items, "next_after": next_after, "high_watermark": high}

    def resolution(
        self, source_id: str, digest: str | None, purpose: str, now: datetime
    ) -> tuple[str, str | None]:
        """``(status, reason)`` of one ref, the first reason that applies."""
        source = self.sources.get(source_id)
        if source is None:
            return "unavailable", "not_found"
        if source.value.working_note and purpose == "generation":
            return "unavailable", "not_eligible"
        state = self.state_of(source, now)
        if state != "active":
            return "unavailable", state
        if digest is not None and digest != content_digest(source.value.content):
            return "unavailable", "digest_mismatch"
        return "available", None

    def state_of(self, source: Source, now: datetime) -> str:
        closed_at = self.closed.get(source.value.session_id or "")
        return source.state(now, closed_at if source.value.working_note else None)

    def purge(self, older_than: timedelta, now: datetime, dry_run: bool) -> dict:
        """The counts of a purge (no holds, no handoffs: nothing is skipped)."""
        cutoff = now - older_than
        notes = [
            source
            for source in self.journal
            if source.value.working_note
            and self.state_of(source, cutoff) in ("expired", "closed")
        ]
        envelopes = [
            envelope
            for session_id, envelope in self.envelopes.items()
            if self.closed.get(session_id, cutoff + timedelta(1)) <= cutoff
            and envelope.notes_held
        ]
        if not dry_run:
            for envelope in envelopes:
                envelope.erase(None)
            # No copy of a purged note survives: its text leaves every envelope.
            for source in notes:
                source.purged_at = now
                for envelope in self.envelopes.values():
                    envelope.erase({source.value.content})
        return {
            "dry_run": dry_run,
            "purged": len(notes),
            "skipped_held": 0,
            "skipped_cited": 0,
            "envelopes_cleared": len(envelopes),
        }

    def redact(self, source: Source, now: datetime) -> None:
        """Tombstone ``source`` and erase its text from the scope's envelopes."""
        if source.purged_at is not None:
            return
        source.purged_at = now
        for envelope in self.envelopes.values():
            envelope.erase({source.value.content})


def typed(meta: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """Meta with each value's JSON type: ``1``, ``1.0``, ``true`` and ``"1"`` differ."""
    return {key: (type(value).__name__, value) for key, value in meta.items()}


@dataclass
class Envelope:
    """One session envelope: its version, its meta, the version of its notes."""

    version: int = 0
    meta: dict[str, Any] = field(default_factory=dict)
    notes_version: int | None = None
    # Every notes text the envelope or its revisions still hold (purge erases them).
    notes_held: set[str] = field(default_factory=set)

    def write(self, changes: dict[str, Any]) -> int:
        """Apply ``changes`` (``None`` or ``""`` unsets a key); the status."""
        created = self.version == 0
        meta = {**self.meta, **changes}
        meta = {key: value for key, value in meta.items() if value not in (None, "")}
        if created or typed(meta) != typed(self.meta):
            self.version += 1
            if meta.get("workingNotes") != self.meta.get("workingNotes"):
                self.notes_version = self.version if "workingNotes" in meta else None
            self.meta = meta
            if "workingNotes" in meta:
                self.notes_held.add(meta["workingNotes"])
        return 201 if created else 200

    def replace_host_part(self, host_meta: dict[str, Any]) -> int:
        """The host's PUT: every host-owned key replaced, worker keys carried."""
        cleared = {key: None for key in self.meta if key in HOST_KEYS}
        return self.write({**cleared, **host_meta})

    def erase(self, texts: set[str] | None) -> None:
        """Erase the notes texts ``texts`` (None: all) from the envelope."""
        notes = self.meta.get("workingNotes")
        if notes is not None and (texts is None or notes in texts):
            self.write({"workingNotes": None})
        self.notes_held -= self.notes_held if texts is None else texts
