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


class SessionNotFound(DomainError):
    """A session bundle of a session the scope has no trace of."""

    status_code = 404
    code = "session_not_found"
    message = "The scope has no Working Note, envelope or closure of that session."
