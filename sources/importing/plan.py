"""What an import would do, found without writing: new, already there, or conflict.

A Source of the file is *new* when its identity is not in the scope and its
position is free, *already imported* when the identity holds the same value at
the same position, and a *conflict* otherwise (another value, another
position, or its position held by another identity). A scope of the file is new,
the same as ours, or a conflict (other title, summary, parent or references; or
its creation key used by another scope). Any conflict refuses the whole import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.utils import timezone

from ..models import ContentSource, Scope
from ..rows import CONTENT, SourceRow
from ..selectors import ScopeView, scope_get
from .reference import ReferenceDatabase, ReferenceScope, ReferenceSource, Unsupported

CONFLICTS_SHOWN = 20


@dataclass(frozen=True)
class Conflict:
    scope_id: str
    source_id: str | None  # None: the scope itself
    reason: str

    def __str__(self) -> str:
        where = (
            self.scope_id
            if self.source_id is None
            else (f"{self.scope_id} / {self.source_id!r}")
        )
        return f"{where}: {self.reason}"


@dataclass
class ScopePlan:
    scope: ReferenceScope
    exists: bool
    sources: int = 0  # in the file (supported ones)
    new: int = 0
    last_position: int = 0  # the highest position in the file


@dataclass
class ImportPlan:
    scopes: list[ScopePlan] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    unsupported: list[Unsupported] = field(default_factory=list)

    @property
    def new_sources(self) -> int:
        return sum(scope.new for scope in self.scopes)

    @property
    def file_sources(self) -> int:
        return sum(scope.sources for scope in self.scopes)


def source_row(
    source: ReferenceSource, *, principal: str, request_id: str
) -> SourceRow:
    """The row capture would store for ``source`` (our canonical text, digests)."""
    return SourceRow.of(
        scope_id=source.scope_id,
        source_id=source.source_id,
        value=source.value,
        principal=principal,
        request_id=request_id,
        now=timezone.now(),
    )


def import_plan(
    reference: ReferenceDatabase,
    *,
    only: set[str] | None,
    principal: str,
    advance: Callable[[int], object] = lambda count: None,
) -> ImportPlan:
    """Compare the file with this registry (reads only); ``advance`` per Source."""
    plan = ImportPlan()
    chosen = [s for s in reference.scopes() if only is None or s.scope_id in only]
    known = {scope.scope_id for scope in chosen}
    if only is not None:
        for missing in sorted(only - known):
            plan.conflicts.append(Conflict(missing, None, "no such scope in the file"))
    for scope in chosen:
        ours = _ours(scope.scope_id)
        plan.conflicts += _scope_conflicts(scope, ours, known, principal)
        scope_plan = ScopePlan(scope=scope, exists=ours is not None)
        plan.scopes.append(scope_plan)
        _plan_sources(reference, scope_plan, plan, principal, advance)
    return plan


def _ours(scope_id: str) -> ScopeView | None:
    if not Scope.objects.filter(scope_id=scope_id).exists():
        return None
    return scope_get(scope_id=scope_id)


def _scope_conflicts(
    scope: ReferenceScope, ours: ScopeView | None, known: set[str], principal: str
) -> Iterable[Conflict]:
    for needed in [scope.parent_scope_id, *scope.context_references]:
        if needed is not None and needed not in known and _ours(needed) is None:
            yield Conflict(scope.scope_id, None, f"needs scope {needed}, not imported")
    keyed = Scope.objects.filter(
        created_by=principal, idempotency_key=scope.idempotency_key
    ).exclude(scope_id=scope.scope_id)
    if keyed.exists():
        yield Conflict(
            scope.scope_id,
            None,
            f"its creation key {scope.idempotency_key!r} names another scope here",
        )
    if ours is None:
        return
    theirs = (
        scope.title,
        scope.summary,
        scope.parent_scope_id,
        scope.context_references,
        scope.external_references,
    )
    mine = (
        ours.title,
        ours.summary,
        ours.parent_scope_id,
        ours.context_references,
        ours.external_references,
    )
    if theirs != mine:
        yield Conflict(scope.scope_id, None, "the scope here has other fields")


def _plan_sources(
    reference: ReferenceDatabase,
    scope_plan: ScopePlan,
    plan: ImportPlan,
    principal: str,
    advance: Callable[[int], object],
) -> None:
    scope_id = scope_plan.scope.scope_id
    by_id: dict[str, tuple[int, str]] = {}
    by_position: dict[int, str] = {}
    if scope_plan.exists:
        for source_id, position, digest in (
            ContentSource.objects.filter(scope_id=scope_id, source_type=CONTENT)
            .values_list("source_id", "position", "value_digest")
            .iterator(2000)
        ):
            by_id[source_id] = (position, digest)
            by_position[position] = source_id
    for source in reference.sources(scope_id, unsupported=plan.unsupported):
        advance(1)
        row = source_row(source, principal=principal, request_id="plan")
        scope_plan.sources += 1
        scope_plan.last_position = max(scope_plan.last_position, source.position)
        conflict = _classify(source, row.value_digest, by_id, by_position)
        if conflict is None and source.source_id not in by_id:
            scope_plan.new += 1
        elif conflict is not None:
            plan.conflicts.append(Conflict(scope_id, source.source_id, conflict))


def _classify(
    source: ReferenceSource,
    digest: str,
    by_id: dict[str, tuple[int, str]],
    by_position: dict[int, str],
) -> str | None:
    """None when the Source is new or already imported; otherwise the conflict."""
    existing = by_id.get(source.source_id)
    if existing is None:
        holder = by_position.get(source.position)
        if holder is None:
            return None
        return f"position {source.position} holds {holder!r} here"
    position, stored = existing
    if stored != digest:
        return "the identity holds another value here"
    if position != source.position:
        return f"it is at position {position} here, {source.position} in the file"
    return None
