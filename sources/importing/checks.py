"""Checking a reference file against itself, before anything is written.

Every row must be one the API would have taken, by the API's own rules: a scope
row is validated as ``POST /v1/scopes`` validates its body (``ScopeCreate``), a
Source row as the capture that made it (``CaptureContent``,
``CaptureWorkingNote`` or ``CreateSource`` with ``SourcePath``), each through
the request parser's walk (NUL, unpaired surrogates, numbers) and then the
capture's value rules (reserved kinds and schemas, canonical size). The file
must also hold together: scope ids of the reference's ``scp_`` form, versions
of at least 1, no parent cycle, no scope referencing itself, every Source in a
scope of the file, and each scope's positions 1, 2, 3... without a gap or a
repeat. A receipt the reference server wrote itself (``handoff_receipt``) is
exempt from the reserved-schema rule only: it is the server's row, not a
client's capture. An expiry already past is kept (the note replays).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from django.utils import timezone
from pydantic import BaseModel

from powercontext.exceptions import DomainError, RequestValidationError
from powercontext.inputs import check_json_value, validate_input

from ..digests import SourceValue
from ..identifiers import is_scope_id
from ..inputs import (
    CaptureContent,
    CaptureWorkingNote,
    CreateSource,
    ScopeCreate,
    SourcePath,
)
from ..rows import CONTENT, SourceRow
from ..services import values
from .reference import (
    CAPTURED,
    CREATED,
    NOTE,
    ReferenceDatabase,
    ReferenceScope,
    RowUnreadable,
    SourceRequest,
    UnsupportedRow,
    source_request,
)

_OPERATION_MODELS: dict[str, type[BaseModel]] = {
    CAPTURED: CaptureContent,
    NOTE: CaptureWorkingNote,
    CREATED: CreateSource,
}


@dataclass(frozen=True)
class Invalid:
    """A row of the file the API would not have taken, and the rule it breaks."""

    table: str
    key: str  # the row's key, as ``repr`` (no raw control characters)
    rule: str

    def __str__(self) -> str:
        return f"{self.table} {self.key}: {self.rule}"


def file_problems(reference: ReferenceDatabase) -> Iterator[Invalid]:
    """Every reason the file cannot be imported as a whole (reads only)."""
    scopes = reference.scopes()
    for scope in scopes:
        yield from _scope_problems(scope)
    yield from _cycles(scopes)
    yield from _source_problems(reference, {scope.scope_id for scope in scopes})


# --- Scopes ---------------------------------------------------------------------------


def _scope_problems(scope: ReferenceScope) -> Iterator[Invalid]:
    key = repr(scope.scope_id)

    def invalid(rule: str) -> Invalid:
        return Invalid("pc_scopes", key, rule)

    if not isinstance(scope.scope_id, str) or not is_scope_id(scope.scope_id):
        yield invalid("scope_id is not 'scp_' and 26 lowercase Crockford base32 digits")
    if type(scope.version) is not int or scope.version < 1:
        yield invalid(f"version {scope.version!r} is not an integer of at least 1")
    if scope.scope_id in scope.context_references:
        yield invalid("context_references names the scope itself")
    body = {
        "title": scope.title,
        "summary": scope.summary,
        "parent_scope_id": scope.parent_scope_id,
        "context_references": scope.context_references,
        "external_references": [
            {"kind": kind, "value": value} for kind, value in scope.external_references
        ],
        "idempotency_key": scope.idempotency_key,
    }
    for rule in _request_problems(ScopeCreate, body):
        yield invalid(rule)


def _cycles(scopes: list[ReferenceScope]) -> Iterator[Invalid]:
    parents = {scope.scope_id: scope.parent_scope_id for scope in scopes}
    for scope_id in parents:
        trail = [scope_id]
        parent = parents.get(scope_id)
        while parent is not None and parent not in trail and len(trail) <= len(parents):
            trail.append(parent)
            parent = parents.get(parent)
        if parent == scope_id:
            chain = " -> ".join(repr(step) for step in [*trail, scope_id])
            yield Invalid("pc_scopes", repr(scope_id), f"parent cycle {chain}")


# --- Sources --------------------------------------------------------------------------


def _source_problems(
    reference: ReferenceDatabase, scope_ids: set[str]
) -> Iterator[Invalid]:
    expected: dict[str, int] = {}  # the next position each scope must hold
    for scope_id, source_type, source_id, position, payload in reference.source_rows():
        key = repr((scope_id, source_type, source_id))

        def invalid(rule: str, key: str = key) -> Invalid:
            return Invalid("pc_sources", key, rule)

        if scope_id not in scope_ids:
            yield invalid("its scope_id is not in pc_scopes")
        if type(position) is not int:
            yield invalid(f"journal_position {position!r} is not an integer")
        elif position != expected.get(scope_id, 1):
            yield invalid(
                f"journal_position {position}: positions of a scope run 1, 2, 3... "
                f"without a gap or a repeat; {expected.get(scope_id, 1)} expected"
            )
        expected[scope_id] = max(expected.get(scope_id, 1), _next(position))
        for rule in _row_problems(scope_id, source_type, source_id, payload):
            yield invalid(rule)


def _next(position: Any) -> int:
    return position + 1 if type(position) is int and position >= 1 else 1


def _row_problems(
    scope_id: Any, source_type: Any, source_id: Any, payload: Any
) -> Iterable[str]:
    try:
        request = source_request(scope_id, source_type, source_id, payload)
    except UnsupportedRow:
        return []  # skipped and named by the plan, as it always was
    except RowUnreadable as exc:
        return [str(exc)]
    path = {"scope_id": scope_id, "source_type": CONTENT, "source_id": source_id}
    problems = _request_problems(SourcePath, path)
    problems += _request_problems(_OPERATION_MODELS[request.operation], request.body)
    if problems:
        return problems
    return _value_problems(request)


def _value_problems(request: SourceRequest) -> list[str]:
    """The capture's own rules on a row whose request is valid."""
    body = request.body
    if request.operation == NOTE:
        value = values.working_note_value(
            content=body["content"],
            session_id=body["session_id"],
            note_kind=body["note_kind"],
            expires_at=CaptureWorkingNote.model_validate(body).expires_at,
        )
    else:
        metadata = body.get("metadata") or {}
        value = SourceValue(content=body["content"], metadata=metadata)
        rule = values.generic_capture_rule(body["content"], metadata)
        if rule is not None and not (
            request.handoff_receipt and rule.reason == "reserved_schema"
        ):
            return [_domain_rule(rule)]
    try:
        SourceRow.of(
            scope_id=body.get("scope_id", "check"),
            source_id=body.get("source_id", "check"),
            value=value,
            principal="check",
            request_id="check",
            now=timezone.now(),
        )
    except DomainError as refused:
        return [_domain_rule(refused)]
    return []


def _request_problems(model: type[BaseModel], body: dict[str, Any]) -> list[str]:
    """What the request parser and ``model`` refuse in ``body``, one line each."""
    try:
        check_json_value(body, ("row",))
        validate_input(model, body, where="row")  # type: ignore[type-var]
    except RequestValidationError as refused:
        return [
            f"{'.'.join(str(part) for part in item['loc'][1:] or item['loc'])}: "
            f"{item['msg']}"
            for item in refused.errors
        ]
    return []


def _domain_rule(refused: DomainError) -> str:
    details = refused.details or {}
    where = f"{details['field']}: " if "field" in details else ""
    reason = f" ({details['reason']})" if "reason" in details else ""
    return f"{where}{refused.message}{reason}"
