"""Restoring a scope bundle: check everything first, then write all of it or nothing.

Three passes over the file, as the reference importer does
(``sources.importing``): *check* reads every line offline (``format``: shape,
digests, chain, counts); *plan* compares the bundle with this instance and
writes nothing - the scope must not exist here, the scopes it names (parent,
context references) must, its creation key must be free, its hold and redaction
ids unused, and a purge run already here must be the bundle's; *write* inserts
every row in one durable transaction, then counts what the scope now holds
against the manifest and re-reads the file's digest - a difference rolls
everything back. Any problem is reported per line and nothing is written.

A session bundle is a part of a scope (its notes' positions have gaps), for
reading and verifying; it is refused here.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import connection, transaction
from django.db.models import Field, Model

from handoffs.models import (
    HandoffCitation,
    HandoffHead,
    HandoffLineage,
    HandoffRevision,
    HandoffStatement,
)
from sessions_app.models import EnvelopeRevision, EnvelopeValue, SessionEnvelope
from sources.models import (
    CaptureAttempt,
    ContentSource,
    Scope,
    ScopeContextReference,
    ScopeExternalReference,
    SessionClosure,
    SourceJournalHead,
)

from ..models import LegalHold, LegalHoldRelease, PurgeRun, Redaction
from . import export
from .format import (
    BundleChecker,
    Checked,
    Problem,
    ScopeRecord,
    instant,
    instant_or_none,
    json_value,
)

BATCH = 1000
Advance = Callable[[int], object]


class BundleRefused(Exception):
    """The bundle cannot be restored here; ``problems`` says why, line by line."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__(f"{len(problems)} problem(s)")
        self.problems = problems


def file_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """The lines of ``path`` (numbered from 1, line feeds kept), read as a stream."""
    with path.open("rb") as stream:
        yield from enumerate(stream, start=1)


@dataclass
class RestorePlan:
    """A checked bundle and what this instance says about it."""

    checked: Checked
    digest: str  # SHA-256 of the file's bytes, to notice a change before commit
    existing_runs: set[str] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)

    @property
    def scope(self) -> ScopeRecord:
        assert self.checked.scope is not None
        return self.checked.scope


def restore_plan(path: Path, *, advance: Advance = lambda count: None) -> RestorePlan:
    """Check ``path`` offline, then against this instance (reads only).

    Raises ``BundleRefused`` with every problem found; otherwise the plan.
    """
    checker = BundleChecker()
    whole = hashlib.sha256()
    kept: list[tuple[int, Any]] = []  # holds, purge runs, redactions (few)
    for number, raw in file_lines(path):
        whole.update(raw)
        record = checker.feed(number, raw)
        if record is not None and record.kind in _PLANNED:  # type: ignore[attr-defined]
            kept.append((number, record))
        advance(1)
    checked = checker.finish()
    if checked.problems:
        raise BundleRefused(checked.problems)
    plan = RestorePlan(checked=checked, digest=whole.hexdigest())
    plan.problems += _instance_problems(plan)
    for number, record in kept:
        plan.problems += _record_problems(plan, number, record)
    if plan.problems:
        raise BundleRefused(plan.problems)
    return plan


_PLANNED = ("hold", "purge_run", "redaction")


def _instance_problems(plan: RestorePlan) -> Iterator[Problem]:
    manifest, scope = plan.checked.manifest, plan.scope
    assert manifest is not None
    if manifest.session_id is not None:
        yield Problem(
            1,
            f"a session bundle (session {manifest.session_id!r}) holds part of a "
            "scope and cannot be restored; export the whole scope",
        )
    if Scope.objects.filter(scope_id=scope.scope_id).exists():
        yield Problem(
            2,
            f"scope {scope.scope_id} exists on this instance; a bundle restores a "
            "scope only where it does not exist",
        )
    for needed in [scope.parent_scope_id, *scope.context_references]:
        if needed is not None and not Scope.objects.filter(scope_id=needed).exists():
            yield Problem(2, f"the scope names scope {needed}, which is not here")
    keyed = Scope.objects.filter(
        created_by=scope.created_by, idempotency_key=scope.idempotency_key
    ).exclude(scope_id=scope.scope_id)
    if keyed.exists():
        yield Problem(
            2,
            f"its creation key {scope.idempotency_key!r} of {scope.created_by!r} "
            "names another scope here",
        )


def _record_problems(plan: RestorePlan, number: int, record: Any) -> Iterator[Problem]:
    if record.kind == "hold":
        if LegalHold.objects.filter(hold_id=record.hold_id).exists():
            yield Problem(number, f"hold {record.hold_id} exists here")
    elif record.kind == "redaction":
        if Redaction.objects.filter(redaction_id=record.redaction_id).exists():
            yield Problem(number, f"redaction {record.redaction_id} exists here")
    else:
        existing = PurgeRun.objects.filter(run_id=record.run_id).first()
        if existing is None:
            return
        ours = export.purge_run_record(existing)
        if ours != record.model_dump():
            yield Problem(number, f"purge run {record.run_id} is another run here")
        plan.existing_runs.add(record.run_id)


class RestoreMismatch(Exception):
    """After writing, the scope here is not the bundle's; nothing was kept."""


def bundle_restore(
    path: Path, plan: RestorePlan, *, advance: Advance = lambda count: None
) -> dict[str, int]:
    """Write the planned bundle in one durable transaction; the counts written.

    Raises ``RestoreMismatch`` (rolled back) when the file changed since the plan
    or the scope's rows here do not count as the manifest says;
    ``IntegrityError`` when a row was written here meanwhile.
    """
    writer = _Writer(plan)
    whole = hashlib.sha256()
    with transaction.atomic(durable=True):
        for _, raw in file_lines(path):
            whole.update(raw)
            try:
                record = json.loads(raw)["record"]
            except (ValueError, KeyError, TypeError):
                raise RestoreMismatch("the file changed since it was checked") from None
            writer.add(record)
            advance(1)
        writer.flush()
        if whole.hexdigest() != plan.digest:
            raise RestoreMismatch("the file changed since it was checked")
        counts = export.Selection(plan.scope.scope_id).counts()
        assert plan.checked.manifest is not None
        if counts != plan.checked.manifest.counts:
            raise RestoreMismatch(
                f"the scope here counts {counts}, the manifest "
                f"{plan.checked.manifest.counts}"
            )
    return counts


class _Writer:
    """Inserts records in file order; Sources, attempts and envelope rows in batches."""

    def __init__(self, plan: RestorePlan) -> None:
        self.plan = plan
        self.scope_id = plan.scope.scope_id
        self.pending: list[dict[str, Any]] = []
        self.pending_model: type[Model] = ContentSource
        self.envelopes: dict[str, int] = {}
        self.revisions: dict[int, int] = {}  # handoff revision number -> pk

    def add(self, data: dict[str, Any]) -> None:
        kind = data.pop("kind")
        handler = getattr(self, f"_{kind}")
        handler(data)

    def flush(self) -> None:
        """Insert the queued rows: COPY on PostgreSQL for Sources and attempts
        (their text columns as the bundle spells them), ``bulk_create`` else."""
        if not self.pending:
            return
        model, rows = self.pending_model, self.pending
        self.pending = []
        if model in _COPIED and connection.vendor == "postgresql":
            _copy(model, rows)
            return
        model._default_manager.bulk_create(
            (model(**_typed(model, row)) for row in rows), batch_size=BATCH
        )

    def _queue(self, model: type[Model], row: dict[str, Any]) -> None:
        if self.pending and self.pending_model is not model:
            self.flush()
        self.pending_model = model
        self.pending.append(row)
        if len(self.pending) >= BATCH:
            self.flush()

    def _manifest(self, data: dict[str, Any]) -> None:
        pass

    def _trailer(self, data: dict[str, Any]) -> None:
        self.flush()

    def _scope(self, data: dict[str, Any]) -> None:
        Scope.objects.create(
            scope_id=data["scope_id"],
            title=data["title"],
            summary=data["summary"],
            parent_id=data["parent_scope_id"],
            version=data["version"],
            idempotency_key=data["idempotency_key"],
            request_digest=data["request_digest"],
            created_by=data["created_by"],
            created_at=instant(data["created_at"]),
            request_id=data["request_id"],
        )
        ScopeContextReference.objects.bulk_create(
            ScopeContextReference(
                scope_id=self.scope_id, ordinal=index, referenced_id=to
            )
            for index, to in enumerate(data["context_references"])
        )
        ScopeExternalReference.objects.bulk_create(
            ScopeExternalReference(
                scope_id=self.scope_id,
                ordinal=index,
                kind=ref["kind"],
                value=ref["value"],
            )
            for index, ref in enumerate(data["external_references"])
        )
        SourceJournalHead.objects.create(
            scope_id=self.scope_id, last_position=data["last_position"]
        )

    def _source(self, data: dict[str, Any]) -> None:
        self._queue(ContentSource, {"scope_id": self.scope_id, **data})

    def _attempt(self, data: dict[str, Any]) -> None:
        self._queue(CaptureAttempt, {"scope_id": self.scope_id, **data})

    def _closure(self, data: dict[str, Any]) -> None:
        self.flush()
        SessionClosure.objects.create(
            scope_id=self.scope_id, **{**data, "closed_at": instant(data["closed_at"])}
        )

    def _hold(self, data: dict[str, Any]) -> None:
        self.flush()
        release = data.pop("release")
        hold = LegalHold.objects.create(
            scope_id=self.scope_id, **{**data, "set_at": instant(data["set_at"])}
        )
        if release is not None:
            LegalHoldRelease.objects.create(
                hold=hold,
                **{**release, "released_at": instant(release["released_at"])},
            )

    def _purge_run(self, data: dict[str, Any]) -> None:
        self.flush()
        if data["run_id"] in self.plan.existing_runs:
            return
        stamps = ("cutoff", "started_at", "finished_at")
        PurgeRun.objects.create(
            **{**data, **{name: instant(data[name]) for name in stamps}}
        )

    def _redaction(self, data: dict[str, Any]) -> None:
        self.flush()
        source = self._source_pk(data.pop("source_type"), data.pop("source_id"))
        Redaction.objects.create(
            scope_id=self.scope_id,
            source_id=source,
            **{**data, "redacted_at": instant(data["redacted_at"])},
        )

    def _envelope(self, data: dict[str, Any]) -> None:
        self.flush()
        envelope = SessionEnvelope.objects.create(
            scope_id=self.scope_id,
            **{
                **data,
                "meta": json_value(data["meta"]),
                "created_at": instant(data["created_at"]),
                "updated_at": instant(data["updated_at"]),
            },
        )
        self.envelopes[data["session_id"]] = envelope.pk

    def _envelope_value(self, data: dict[str, Any]) -> None:
        self._queue(
            EnvelopeValue,
            {
                "envelope_id": self.envelopes[data["session_id"]],
                "digest": data["digest"],
                "for_notes": data["for_notes"],
                "value": json_value(data["value"]),
            },
        )

    def _envelope_revision(self, data: dict[str, Any]) -> None:
        session_id = data.pop("session_id")
        self._queue(
            EnvelopeRevision,
            {
                **data,
                "envelope_id": self.envelopes[session_id],
                "created_at": instant(data["created_at"]),
                "value_digests": json_value(data["value_digests"]),
                "inline_values": json_value(data["inline_values"]),
            },
        )

    def _handoff_revision(self, data: dict[str, Any]) -> None:
        self.flush()
        statements, lineage = data.pop("statements"), data.pop("lineage")
        revision = HandoffRevision.objects.create(
            scope_id=self.scope_id,
            **{**data, "created_at": instant(data["created_at"])},
        )
        self.revisions[revision.revision] = revision.pk
        for statement in statements:
            citations = statement.pop("citations")
            row = HandoffStatement.objects.create(revision=revision, **statement)
            HandoffCitation.objects.bulk_create(
                HandoffCitation(statement=row, **citation) for citation in citations
            )
        HandoffLineage.objects.bulk_create(
            HandoffLineage(
                revision=revision,
                ordinal=pinned["ordinal"],
                source_id=self._source_pk(pinned["source_type"], pinned["source_id"]),
            )
            for pinned in lineage
        )

    def _handoff_head(self, data: dict[str, Any]) -> None:
        self.flush()
        number = data["revision"]
        HandoffHead.objects.create(
            scope_id=self.scope_id,
            current_id=None if number is None else self.revisions[number],
            updated_at=instant_or_none(data["updated_at"]),
        )

    def _source_pk(self, source_type: str, source_id: str) -> int:
        return ContentSource.objects.values_list("pk", flat=True).get(
            scope_id=self.scope_id, source_type=source_type, source_id=source_id
        )


_COPIED = (ContentSource, CaptureAttempt)
_STAMPS = ("expires_at", "created_at", "purged_at", "at")


def _typed(model: type[Model], row: dict[str, Any]) -> dict[str, Any]:
    """A queued row as model fields: Sources' and attempts' stamps as datetimes,
    a Source's metadata as its value."""
    if model not in _COPIED:
        return row
    typed = {
        **row,
        **{name: instant_or_none(row[name]) for name in _STAMPS if name in row},
    }
    if model is ContentSource and row["metadata"] is not None:
        typed["metadata"] = json_value(row["metadata"])
    return typed


def _copy(model: type[Model], rows: list[dict[str, Any]]) -> None:
    """COPY ``rows`` into ``model``'s table. The bundle's stamps (ISO 8601, UTC)
    and metadata (JSON text) are what PostgreSQL reads from COPY's text form."""
    columns = tuple(rows[0])
    table = model._meta.db_table
    statement = (
        f"COPY {table} ({', '.join(_column(model, name) for name in columns)}) "
        "FROM STDIN"
    )
    with (
        connection.cursor() as wrapper,
        connection.wrap_database_errors,
        wrapper.cursor.copy(statement) as copy,
    ):
        for row in rows:
            copy.write_row(tuple(row.values()))


def _column(model: type[Model], name: str) -> str:
    field = model._meta.get_field(name)
    assert isinstance(field, Field)
    assert field.column is not None
    return field.column
