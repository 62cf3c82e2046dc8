"""Errors raised by the lifecycle services."""

from powercontext.exceptions import DomainError


class LegalHoldActive(DomainError):
    status_code = 409
    code = "legal_hold"
    message = (
        "A legal hold applies to this Source (its scope or its session): it cannot "
        "be redacted or purged until every hold on it is released."
    )


class LegalHoldNotFound(DomainError):
    status_code = 404
    code = "legal_hold_not_found"
    message = "The requested legal hold was not found in this scope."
