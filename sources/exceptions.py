"""Errors raised by the registry's services and selectors."""

from powercontext.api.exceptions import DomainError


class ScopeNotFound(DomainError):
    status_code = 404
    code = "scope_not_found"
    message = "The requested Scope was not found."


class ScopeIdempotencyConflict(DomainError):
    status_code = 409
    code = "scope_idempotency_conflict"
    message = "The Scope creation key identifies different parameters."
