"""The reference client's legacy Memory operations (``/v1/memory/*``): which are
served, and the refusals of the others.

This service keeps Memory records (``remember_memory`` stores one; the entry list,
the text search and the exact read by legacy ``target`` read them: docs/api.md,
"Memory"). The reference answers the legacy collection operations (capacity,
changes, revise, retire, citation reads, remember with a revision precondition)
with ``422 legacy_memory_operation_unsupported`` and a fixed ``details`` object
naming the operation, the alternatives and an instruction; those are answered here
with the same body, so a client written against the reference reads the same
refusal. What the reference serves from features this service does not have
(``flush_memory``: extraction of Memory from Sources; vector and hybrid search:
embeddings) is ``422 operation_not_supported``, the reference's code for an
operation a server does not offer, with the same ``{kind, name, operation}``
details. The wording of the legacy refusal is the reference's, as a client matches
on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

from powercontext.exceptions import DomainError

from .selectors import scope_require

LEGACY_MESSAGE = (
    "The legacy Memory collection contract cannot continue for this operation. "
    "Reconstruct the request using Atomic Memory operations; do not drop "
    "collection CAS preconditions and retry automatically."
)


@dataclass(frozen=True)
class LegacyOperation:
    """A legacy Memory operation as the reference names it in its refusal."""

    operation: str
    alternatives: tuple[str, ...]
    instruction: str


CAPACITY = LegacyOperation(
    "collection capacity",
    (),
    "Atomic Memory has no collection capacity budget; this query has no equivalent.",
)
CHANGES = LegacyOperation(
    "continuous collection changes",
    (),
    "Legacy collection history is archived offline; there is no continuous "
    "changes stream after migration.",
)
CITATION_READ = LegacyOperation(
    "citation read",
    (
        "GET /v1/scopes/{scope_id}/artifacts/atomic-memory/{artifact_id}"
        "/revisions/{revision}",
        "POST /v1/memory/entries/get",
    ),
    "Read the exact Atomic Artifact revision, or resolve the legacy logical "
    "identity with target.",
)
CITATION_REVISE = LegacyOperation(
    "citation revise",
    ("PUT /v1/scopes/{scope_id}/artifacts/atomic-memory/{artifact_id}",),
    "Read the Atomic Artifact and use its content ETag for the replacement "
    "precondition.",
)
CITATION_RETIRE = LegacyOperation(
    "citation retire",
    ("POST /v1/atomic-memory/lifecycle",),
    "Use forgotten with the exact Atomic Artifact reference and current state_version.",
)
REVISION_PRECONDITION = LegacyOperation(
    "collection revision precondition",
    ("POST /v1/scopes/{scope_id}/artifacts", "POST /v1/atomic-memory/list"),
    "Use independent atomic-memory Artifact identities and their content/state "
    "preconditions; resolve migrated legacy identities through POST "
    "/v1/memory/entries/get with target.",
)


class LegacyMemoryOperationUnsupported(DomainError):
    status_code = 422
    code = "legacy_memory_operation_unsupported"
    message = LEGACY_MESSAGE

    def __init__(self, operation: LegacyOperation) -> None:
        super().__init__(
            details={
                "kind": "artifact_family",
                "name": "memory",
                "operation": operation.operation,
                "alternatives": list(operation.alternatives),
                "instruction": operation.instruction,
            }
        )


class OperationNotSupported(DomainError):
    """A Memory feature the reference serves and this service does not have."""

    status_code = 422
    code = "operation_not_supported"
    message = "This server does not support this Memory operation."

    def __init__(self, operation: str) -> None:
        super().__init__(
            details={
                "kind": "artifact_family",
                "name": "memory",
                "operation": operation,
            }
        )


class MemoryEntryNotFound(DomainError):
    """A legacy Memory entry named by ``target``: none exists here."""

    status_code = 404
    code = "not_found"
    message = "The requested value was not found."


def memory_operation_refuse(
    *, operation: str, scope_id: str | None, legacy: LegacyOperation | None
) -> NoReturn:
    """Refuse a Memory operation this service does not serve.

    With ``scope_id``, raises ``ScopeNotFound`` first when it names no scope (the
    reference looks the scope up for these operations, and not for the others).
    Then ``LegacyMemoryOperationUnsupported`` for ``legacy``, else
    ``OperationNotSupported``. Reads nothing else, writes nothing.
    """
    if scope_id is not None:
        scope_require(scope_id=scope_id)
    if legacy is not None:
        raise LegacyMemoryOperationUnsupported(legacy)
    raise OperationNotSupported(operation)


def legacy_entry_get(*, scope_id: str) -> NoReturn:
    """Read a legacy Memory entry by its logical identity (``target``).

    The reference resolves such a target to the entry migrated from a legacy Memory
    collection. This service never kept legacy collections, so no target names an
    entry (a remembered record is read through the list or the search): raises
    ``ScopeNotFound`` when the scope does not exist, else ``MemoryEntryNotFound``.
    """
    scope_require(scope_id=scope_id)
    raise MemoryEntryNotFound()
