"""The bundle's wire form, version 1, and its offline checks (docs/export.md).

A bundle is JSON Lines. Every line is the RFC 8785 canonical JSON
(``powercontext.canonical``) of ``{"chain": DIGEST, "record": RECORD}``: the
record has a ``kind`` naming its shape, and DIGEST is the hex SHA-256 over the
previous line's digest (32 zero bytes before the first line) followed by the
record's canonical bytes. The manifest is the first record and the trailer the
last; an edited, dropped, swapped or missing line therefore breaks the chain at
the first line that is not as written. (The record's canonical bytes are a
substring of its line, so a line costs one serialisation.)

Timestamps are UTC with six fractional digits (``2026-01-02T03:04:05.000006Z``),
so they read back to the same microsecond. Stored JSON values (metadata,
envelope values) travel as their JSON text with sorted keys (``json_text``),
which keeps ``1.0`` apart from ``1`` exactly as the instance stored them.

Nothing here touches the database: ``verify_bundle`` runs offline.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError

from powercontext.canonical import (
    CanonicalizationError,
    canonical_json,
    canonical_sha256,
)
from powercontext.jsonvalues import MAX_SAFE_INTEGER, stored_json_loads
from sources.digests import SourceValue, content_digest_of, value_digest

FORMAT = "powercontext-bundle"
FORMAT_VERSION = 1
MEDIA_TYPE = "application/x-ndjson"
GENESIS = "0" * 64

Stamp = Annotated[
    str, StringConstraints(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
]
Hex64 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Prefixed = Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]
# The columns' lengths: a longer value would be refused (PostgreSQL) or kept
# (SQLite) by the database; the check refuses it first, either way.
Id = Annotated[str, StringConstraints(min_length=1, max_length=256)]
Kind = Annotated[str, StringConstraints(min_length=1, max_length=32)]
RecordId = Annotated[str, StringConstraints(min_length=1, max_length=40)]
Name = Annotated[str, StringConstraints(max_length=150)]
RequestId = Annotated[str, StringConstraints(max_length=16)]
Reason = Annotated[str, StringConstraints(max_length=2000)]


def stamp(value: datetime) -> str:
    """``value`` in the bundle's timestamp form (UTC, six fractional digits)."""
    at = value.astimezone(UTC)
    return (
        f"{at.year:04d}-{at.month:02d}-{at.day:02d}T{at.hour:02d}:{at.minute:02d}:"
        f"{at.second:02d}.{at.microsecond:06d}Z"
    )


def stamp_or_none(value: datetime | None) -> str | None:
    return None if value is None else stamp(value)


def instant(text: str) -> datetime:
    """The datetime a ``stamp`` wrote."""
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def instant_or_none(text: str | None) -> datetime | None:
    return None if text is None else instant(text)


def json_text(value: Any) -> str:
    """A stored JSON value as the bundle carries it: sorted keys, no spaces."""
    return json.dumps(
        value,
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
        allow_nan=False,
    )


def json_value(text: str) -> Any:
    """The value ``json_text`` wrote (unsafe integers read as stored ones are)."""
    return stored_json_loads(text)


# --- Record shapes --------------------------------------------------------------------


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Manifest(Record):
    kind: Literal["manifest"]
    format: Literal["powercontext-bundle"]
    format_version: Literal[1]
    service_version: str
    scope_id: Id
    session_id: Id | None
    created_at: Stamp
    counts: dict[str, int]


class ExternalReference(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    kind: str
    value: str


class ScopeRecord(Record):
    kind: Literal["scope"]
    scope_id: Id
    title: Annotated[str, StringConstraints(max_length=256)]
    summary: Reason
    parent_scope_id: Id | None
    context_references: list[Id]
    external_references: list[ExternalReference]
    version: int
    idempotency_key: Id
    request_digest: str
    created_by: Name
    created_at: Stamp
    request_id: RequestId
    last_position: int


class SourceRecord(Record):
    kind: Literal["source"]
    source_type: Kind
    source_id: Id
    position: int
    content: str | None
    content_bytes: int | None
    metadata: str | None
    metadata_bytes: int | None
    is_working_note: bool
    session_id: Id | None
    note_kind: str | None
    expires_at: Stamp | None
    value_digest: Hex64
    content_digest: Prefixed
    created_at: Stamp
    created_by: Name
    request_id: RequestId
    purged_at: Stamp | None
    purge_run: RecordId | None


class AttemptRecord(Record):
    kind: Literal["attempt"]
    source_type: Kind
    source_id: Id
    outcome: Literal["accepted", "replayed", "conflict", "rejected"]
    reason: str | None
    value_digest: str
    principal: Name
    request_id: RequestId
    at: Stamp


class ClosureRecord(Record):
    kind: Literal["closure"]
    session_id: Id
    closed_at: Stamp
    closed_by: Name
    request_id: RequestId


class HoldRelease(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    reason: Reason
    released_by: Name
    released_at: Stamp
    request_id: RequestId


class HoldRecord(Record):
    kind: Literal["hold"]
    hold_id: RecordId
    session_id: Id | None
    reason: Reason
    set_by: Name
    set_at: Stamp
    request_id: RequestId
    release: HoldRelease | None


class PurgeRunRecord(Record):
    kind: Literal["purge_run"]
    run_id: RecordId
    scope_id: str | None  # None: a run over every scope that tombstoned some here
    older_than_seconds: int
    cutoff: Stamp
    dry_run: bool
    purged: int
    skipped_held: int
    skipped_cited: int
    envelopes_cleared: int
    started_by: Name
    started_at: Stamp
    finished_at: Stamp
    request_id: RequestId


class RedactionRecord(Record):
    kind: Literal["redaction"]
    redaction_id: RecordId
    source_type: Kind
    source_id: Id
    reason: Reason
    redacted_by: Name
    redacted_at: Stamp
    request_id: RequestId


class EnvelopeRecord(Record):
    kind: Literal["envelope"]
    session_id: Id
    meta: str
    version: int
    notes_version: int | None
    clock: int
    created_at: Stamp
    updated_at: Stamp


class EnvelopeValueRecord(Record):
    kind: Literal["envelope_value"]
    session_id: Id
    digest: Hex64
    for_notes: bool
    value: str


class EnvelopeRevisionRecord(Record):
    kind: Literal["envelope_revision"]
    session_id: Id
    version: int
    clock: int
    writer: Literal["host", "worker"]
    operation: Literal["replace", "overlay", "notes_put", "notes_clear", "notes_erased"]
    principal: Name
    request_id: RequestId
    created_at: Stamp
    value_digests: str
    inline_values: str


class Citation(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    ordinal: int
    kind: Literal["source", "artifact"]
    source_type: str | None
    source_id: str | None
    artifact_family: str | None
    artifact_id: str | None
    artifact_revision: int | None


class Statement(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    claim: Literal["state", "next_action", "omission"]
    ordinal: int
    text: str
    citations: list[Citation]


class Pinned(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    ordinal: int
    source_type: Kind
    source_id: Id


class HandoffRevisionRecord(Record):
    kind: Literal["handoff_revision"]
    revision: int
    content: str
    content_digest: Prefixed
    objective: str
    disposition: Literal["continuable", "blocked", "complete"]
    created_at: Stamp
    created_by: Name
    request_id: RequestId
    statements: list[Statement]
    lineage: list[Pinned]


class HandoffHeadRecord(Record):
    kind: Literal["handoff_head"]
    revision: int | None
    updated_at: Stamp | None


class Trailer(Record):
    kind: Literal["trailer"]
    records: int


# Kinds in bundle order; the three envelope kinds share a place (an envelope,
# then its values, then its revisions, envelope by envelope).
KINDS: dict[str, type[Record]] = {
    "manifest": Manifest,
    "scope": ScopeRecord,
    "source": SourceRecord,
    "attempt": AttemptRecord,
    "closure": ClosureRecord,
    "hold": HoldRecord,
    "purge_run": PurgeRunRecord,
    "redaction": RedactionRecord,
    "envelope": EnvelopeRecord,
    "envelope_value": EnvelopeValueRecord,
    "envelope_revision": EnvelopeRevisionRecord,
    "handoff_revision": HandoffRevisionRecord,
    "handoff_head": HandoffHeadRecord,
    "trailer": Trailer,
}
COUNTED = tuple(kind for kind in KINDS if kind not in ("manifest", "trailer"))
_PLACE = {
    kind: index for index, kind in enumerate(KINDS) if not kind.startswith("envelope_")
}
_PLACE["envelope_value"] = _PLACE["envelope_revision"] = _PLACE["envelope"]


# --- Writing -------------------------------------------------------------------


class Chain:
    """The running digest of a bundle, line by line."""

    def __init__(self) -> None:
        self.digest = GENESIS
        self.lines = 0

    def line(self, record: dict[str, Any]) -> bytes:
        """The bundle line of ``record``, line feed included."""
        body = record_bytes(record)
        self.digest = link(self.digest, body)
        self.lines += 1
        return b'{"chain":"' + self.digest.encode() + b'","record":' + body + b"}\n"

    def trailer(self) -> bytes:
        return self.line({"kind": "trailer", "records": self.lines})


_SCALARS = (str, int, bool, type(None))


def record_bytes(record: dict[str, Any]) -> bytes:
    """The canonical JSON of a record. A record of ASCII keys and scalars (nearly
    every one) is written by ``json`` directly, which writes such a value exactly
    as RFC 8785 does (``powercontext.canonical``); others go through it."""
    if all(type(value) in _SCALARS for value in record.values()) and all(
        type(value) is not int or abs(value) <= MAX_SAFE_INTEGER
        for value in record.values()
    ):
        return json.dumps(
            record, ensure_ascii=False, sort_keys=True, separators=(",", ":")
        ).encode("utf-8")
    return canonical_json(record)


def link(previous: str, body: bytes) -> str:
    """The chain after ``previous`` for a record whose canonical bytes are ``body``."""
    return hashlib.sha256(bytes.fromhex(previous) + body).hexdigest()


# --- Checking ------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """A line of a bundle that is not as the format says, and why."""

    line: int
    reason: Reason

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass
class Checked:
    """What a check of a whole bundle found."""

    manifest: Manifest | None = None
    scope: ScopeRecord | None = None
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTED, 0))
    lines: int = 0
    chain: str = GENESIS
    problems: list[Problem] = field(default_factory=list)

    @property
    def first_bad_line(self) -> int | None:
        return min((problem.line for problem in self.problems), default=None)


class BundleChecker:
    """Checks a bundle line by line, as it is read (``feed``), then as a whole
    (``finish``): each line's canonical form, shape and chain, the order of the
    kinds, the content digests, and the manifest's counts and the trailer."""

    def __init__(self) -> None:
        self.checked = Checked()
        self._place = -1
        self._position = 0
        self._trailer_at: int | None = None
        self._envelope: str | None = None
        self._sessions: set[str] = set()

    def feed(self, number: int, raw: bytes) -> Record | None:
        """Check line ``number`` (its bytes, newline included); its record or None."""
        checked = self.checked
        checked.lines = number
        problem = self._problem(number)
        if self._trailer_at is not None:
            problem(f"a line after the trailer (line {self._trailer_at})")
            return None
        if not raw.endswith(b"\n"):
            problem("the line does not end with a line feed (a truncated file?)")
        text = raw.rstrip(b"\n")
        try:
            line = json.loads(text)
        except ValueError as exc:
            problem(f"not JSON ({exc})")
            return None
        if (
            not isinstance(line, dict)
            or set(line) != {"chain", "record"}
            or not isinstance(line["chain"], str)
            or not isinstance(line["record"], dict)
        ):
            problem('not a line of a bundle ({"chain": digest, "record": object})')
            return None
        claimed, data = line["chain"], line["record"]
        try:
            body = record_bytes(data)
        except (CanonicalizationError, UnicodeEncodeError) as exc:
            problem(f"not canonical JSON ({exc})")
            return None
        rebuilt = (
            b'{"chain":"' + claimed.encode() + b'","record":' + body + b"}"
            if _is_hex64(claimed)
            else canonical_json({"chain": claimed, "record": data})
        )
        if rebuilt != text:
            problem("not in canonical form (RFC 8785): it was edited")
        expected = link(checked.chain, body)
        if claimed != expected:
            problem(
                "the chained digest does not match: this line or the one before "
                "it was edited, dropped, moved or inserted"
            )
        # Resynchronise on the line's own claim, so one bad line is named once.
        checked.chain = claimed if _is_hex64(claimed) else expected
        record = self._shape(number, data, problem)
        if record is not None:
            self._rules(number, record, problem)
        return record

    def finish(self) -> Checked:
        """The whole-bundle checks after the last line; the result."""
        checked = self.checked
        end = checked.lines + 1
        if checked.lines == 0:
            checked.problems.append(Problem(1, "the file is empty"))
        elif self._trailer_at is None:
            checked.problems.append(
                Problem(end, "no trailer: the file ends early (truncated)")
            )
        manifest = checked.manifest
        # Counts are compared only when every line was sound: otherwise they
        # differ because of a line already named.
        if manifest is not None and not checked.problems:
            declared = {kind: manifest.counts.get(kind, 0) for kind in COUNTED}
            if declared != checked.counts or set(manifest.counts) - set(COUNTED):
                checked.problems.append(
                    Problem(
                        1,
                        f"the manifest's counts {manifest.counts} are not the "
                        f"records' {checked.counts}",
                    )
                )
        return checked

    def _problem(self, number: int) -> Any:
        def add(reason: str) -> None:
            self.checked.problems.append(Problem(number, reason))

        return add

    def _shape(self, number: int, data: dict[str, Any], problem: Any) -> Record | None:
        kind = data.get("kind")
        model = KINDS.get(kind) if isinstance(kind, str) else None
        if model is None:
            problem(f"unknown kind {kind!r}")
            return None
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            for error in exc.errors()[:5]:
                where = ".".join(str(part) for part in error["loc"]) or kind
                problem(f"{kind}: {where}: {error['msg']}")
            return None

    def _rules(self, number: int, record: Record, problem: Any) -> None:
        checked = self.checked
        kind = record.kind  # type: ignore[attr-defined]
        if number == 1 and kind != "manifest":
            problem("the first line must be the manifest")
        if kind == "manifest" and number != 1:
            problem("a manifest after the first line")
        place = _PLACE[kind]
        if place < self._place:
            problem(f"a {kind} record after the {_kind_at(self._place)} records")
        self._place = max(self._place, place)
        if kind in checked.counts:
            checked.counts[kind] += 1
        check = _RULES.get(kind)
        if check is not None:
            for reason in check(self, number, record):
                problem(reason)

    # Per-kind rules: each yields the reasons its record breaks.

    def _manifest(self, number: int, record: Manifest) -> Iterator[str]:
        self.checked.manifest = record
        return iter(())

    def _scope(self, number: int, record: ScopeRecord) -> Iterator[str]:
        if number != 2:
            yield "the scope must be the second line"
        manifest = self.checked.manifest
        if manifest is not None and manifest.scope_id != record.scope_id:
            yield f"scope {record.scope_id!r} is not the manifest's"
        self.checked.scope = record

    def _source(self, number: int, record: SourceRecord) -> Iterator[str]:
        if record.position <= self._position:
            yield f"position {record.position} is not after {self._position}"
        self._position = record.position
        scope = self.checked.scope
        if scope is not None and record.position > scope.last_position:
            yield f"position {record.position} is past the journal head"
        yield from source_problems(record)

    def _envelope_record(self, number: int, record: EnvelopeRecord) -> Iterator[str]:
        if record.session_id in self._sessions:
            yield f"a second envelope of session {record.session_id!r}"
        self._sessions.add(record.session_id)
        self._envelope = record.session_id
        yield from _json_problems(record.meta, "meta")

    def _envelope_value(
        self, number: int, record: EnvelopeValueRecord
    ) -> Iterator[str]:
        if record.session_id != self._envelope:
            yield "not right after its envelope"
        problems = list(_json_problems(record.value, "value"))
        yield from problems
        if not problems and canonical_sha256(json_value(record.value)) != record.digest:
            yield "digest is not the SHA-256 of the value's canonical JSON"

    def _envelope_revision(
        self, number: int, record: EnvelopeRevisionRecord
    ) -> Iterator[str]:
        if record.session_id != self._envelope:
            yield "not right after its envelope"
        yield from _json_problems(record.value_digests, "value_digests")
        yield from _json_problems(record.inline_values, "inline_values")

    def _handoff_revision(
        self, number: int, record: HandoffRevisionRecord
    ) -> Iterator[str]:
        if content_digest_of(record.content) != record.content_digest:
            yield "content_digest is not the SHA-256 of the content"

    def _trailer(self, number: int, record: Trailer) -> Iterator[str]:
        self._trailer_at = number
        if record.records != number - 1:
            yield f"the trailer counts {record.records} records; {number - 1} precede"


def _kind_at(place: int) -> str:
    return next(kind for kind, index in _PLACE.items() if index == place)


_RULES: dict[str, Any] = {
    "manifest": BundleChecker._manifest,
    "scope": BundleChecker._scope,
    "source": BundleChecker._source,
    "envelope": BundleChecker._envelope_record,
    "envelope_value": BundleChecker._envelope_value,
    "envelope_revision": BundleChecker._envelope_revision,
    "handoff_revision": BundleChecker._handoff_revision,
    "trailer": BundleChecker._trailer,
}


def source_problems(record: SourceRecord) -> Iterator[str]:
    """A Source's own rules: a tombstone holds no text; otherwise both digests are
    those of its content and value; the note fields agree with each other."""
    if record.is_working_note != (record.session_id is not None):
        yield "is_working_note and session_id disagree"
    if record.is_working_note != (record.note_kind is not None):
        yield "is_working_note and note_kind disagree"
    if not record.is_working_note and record.expires_at is not None:
        yield "a plain Source has no expiry"
    tombstone = record.purged_at is not None
    if tombstone != (record.purge_run is not None):
        yield "purged_at and purge_run are set together"
    if tombstone:
        if record.content is not None or record.metadata is not None:
            yield "a tombstone carries no content or metadata"
        return
    if record.content is None or record.metadata is None:
        yield "content and metadata are null in tombstones only"
        return
    if content_digest_of(record.content) != record.content_digest:
        yield "content_digest is not the SHA-256 of the content"
        return
    problems = [
        *_json_problems(record.content, "content"),
        *_json_problems(record.metadata, "metadata"),
    ]
    yield from problems
    if problems:
        return
    metadata = json_value(record.metadata)
    if not isinstance(metadata, dict):
        yield "metadata is not an object"
        return
    value = SourceValue(
        content=json_value(record.content),
        metadata=metadata,
        working_note=record.is_working_note,
        session_id=record.session_id,
        note_kind=record.note_kind,
        expires_at=instant_or_none(record.expires_at),
    )
    try:
        digest = value_digest(value, stored_content=record.content)
    except CanonicalizationError as exc:
        yield f"the value cannot be digested ({exc})"
        return
    if digest != record.value_digest:
        yield "value_digest is not the SHA-256 of the value document"


def _json_problems(text: str, name: str) -> Iterator[str]:
    try:
        json_value(text)
    except ValueError as exc:
        yield f"{name} is not JSON text ({exc})"


def _is_hex64(text: str) -> bool:
    return re.fullmatch(r"[0-9a-f]{64}", text) is not None


def check_lines(lines: Iterable[bytes]) -> Checked:
    """Check a whole bundle given as its lines (each with its line feed)."""
    checker = BundleChecker()
    for number, raw in enumerate(lines, start=1):
        checker.feed(number, raw)
    return checker.finish()
