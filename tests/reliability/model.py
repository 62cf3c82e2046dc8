"""The registry as a few dictionaries: what the HTTP API must agree with, step by step.

The model knows nothing of the service's code. It holds, per scope, the Sources in
journal order with the value each was first captured with, every capture attempt
per identity, and the session envelopes; each method applies one operation the way
``docs/api.md`` describes it and returns the status (and receipt) the API must
answer. Rules for later features (session close, purge, redaction) belong here as
further methods and fields: a purged Source keeps its position and answers
``unavailable``/``purged`` in resolution, and so on.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime
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

    def receipt(self) -> dict[str, Any]:
        source = {"name": "content", "source_id": self.source_id}
        return {"status": "accepted", "source": source, "position": self.position}

    def record(self, scope_id: str) -> dict[str, Any]:
        return {
            "receipt_identity": None,
            "scope_id": scope_id,
            "source_type": "content",
            "source_id": self.source_id,
            "content": self.value.content,
            "position": self.position,
            "content_digest": content_digest(self.value.content),
        }

    def expired(self, now: datetime) -> bool:
        expires = self.value.expires_at
        return self.value.working_note and expires is not None and expires <= now


@dataclass
class Scope:
    scope_id: str
    sources: dict[str, Source] = field(default_factory=dict)
    attempts: dict[str, list[str]] = field(default_factory=dict)
    envelopes: dict[str, Envelope] = field(default_factory=dict)

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
        if source.expired(now):
            return "unavailable", "expired"
        if digest is not None and digest != content_digest(source.value.content):
            return "unavailable", "digest_mismatch"
        return "available", None


def typed(meta: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """Meta with each value's JSON type: ``1``, ``1.0``, ``true`` and ``"1"`` differ."""
    return {key: (type(value).__name__, value) for key, value in meta.items()}


@dataclass
class Envelope:
    """One session envelope: its version, its meta, the version of its notes."""

    version: int = 0
    meta: dict[str, Any] = field(default_factory=dict)
    notes_version: int | None = None

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
        return 201 if created else 200

    def replace_host_part(self, host_meta: dict[str, Any]) -> int:
        """The host's PUT: every host-owned key replaced, worker keys carried."""
        cleared = {key: None for key in self.meta if key in HOST_KEYS}
        return self.write({**cleared, **host_meta})
