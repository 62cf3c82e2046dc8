"""Errors of token and grant management (spec/access.md 1)."""

from __future__ import annotations

from powercontext.exceptions import DomainError, Forbidden


class TokenNotFound(DomainError):
    status_code = 404
    code = "token_not_found"
    message = "No token has this id."


class GrantNotFound(DomainError):
    status_code = 404
    code = "grant_not_found"
    message = "The token holds no grant of its own on this scope."


class TokenRevoked(DomainError):
    status_code = 409
    code = "token_revoked"
    message = "The token is revoked; mint a new one instead."


class NotYourScope(Forbidden):
    """A grant, token or principal reaches a scope the caller does not administer."""

    message = (
        "You may manage grants only on scopes you administer; '*' grants and tokens "
        "that reach other scopes need a '*:admin' grant."
    )


class BeyondYourLifetime(Forbidden):
    message = (
        "A token cannot give a token (itself included) a later expiry than its own."
    )


class PrincipalNotYours(Forbidden):
    """A mint names a principal that someone else controls."""

    code = "principal_not_yours"
    message = (
        "This principal was created by someone else; mint for a new name (it is "
        "created under yours), or ask a '*:admin' to mint for it."
    )
