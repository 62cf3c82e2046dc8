"""The reference client's legacy Memory operations (``/v1/memory/*``): refused.

This service keeps no Memory. The reference answers several of these operations
with ``422 legacy_memory_operation_unsupported`` and a fixed ``details`` object
naming the operation, the alternatives and an instruction; those are answered here
with the same body, so a client written against the reference reads the same
refusal. The operations the reference still serves (remember without a revision
precondition, search, flush, entry list, entry read by ``target``) are Memory
features this service does not have: ``422 operation_not_supported``, the
reference's code for an operation a server does not offer, with the same
``{kind, name, operation}`` details. The wording of both is the reference's, as a
client matches on it.
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
    """A Memory operation the reference serves and this service does not have."""

    status_code = 422
    code = "operation_not_supported"
    message = "This server keeps no Memory: the operation is not supported."

    def __init__(self, operation: str) -> None:
        super().__init__(
            details={
                "kind": "artifact_family",
                "name": "memory",
                "operation": operation,
            }
        )


def memory_operation_refuse(
    *, operation: str, scope_id: str | None, legacy: LegacyOperation | None
) -> NoReturn:
    """Refuse a Memory operation: there is no Memory here.

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
