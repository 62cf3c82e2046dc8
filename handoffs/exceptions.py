"""Errors raised by evidence resolution and the handoff operations.

Codes and statuses are the reference's (the client keys on them); the messages
are ours.
"""

from powercontext.exceptions import DomainError


class HandoffEvidenceNotFound(DomainError):
    """A citation of a draft or a new revision does not resolve (missing or expired:
    deliberately not told apart, as in the reference)."""

    status_code = 404
    code = "handoff_evidence_not_found"
    message = "A cited Source or handoff revision is not available in this scope."


class ArtifactNotFound(DomainError):
    status_code = 404
    code = "artifact_not_found"
    message = "The requested handoff revision does not exist in this scope."


class RevisionConflict(DomainError):
    status_code = 409
    code = "revision_conflict"
    message = (
        "The handoff's base is not the current revision: continue from the "
        "current revision and finalize again."
    )


class InvalidHandoffGeneration(DomainError):
    """A generation receipt or metadata was sent; this service never issues any."""

    status_code = 422
    code = "invalid_handoff_generation"
    message = (
        "Handoff generation provenance cannot be verified: this service generates "
        "no drafts, so generation must be null or absent."
    )


class HandoffGenerationUnavailable(DomainError):
    status_code = 503
    code = "handoff_generation_unavailable"
    message = (
        "This service has no language model to generate handoff drafts: write the "
        "draft yourself and call finalize."
    )


class EvidenceTooLarge(DomainError):
    """The available content of one resolve call would pass the response budget
    (``POWERCONTEXT_MAX_RESPONSE_BYTES``); refused before any content is read."""

    status_code = 422
    code = "response_too_large"

    def __init__(self, *, size: int, max_bytes: int, available_that_fit: int) -> None:
        super().__init__(
            f"The available Sources cited hold {size} bytes of content; one answer "
            f"carries at most {max_bytes}. Split the refs: the first "
            f"{available_that_fit} available Sources fit in one call, resolve the "
            "rest in further calls.",
            details={
                "field": "refs",
                "reason": "response_too_large",
                "bytes": size,
                "max_bytes": max_bytes,
                "available_that_fit": available_that_fit,
            },
        )
