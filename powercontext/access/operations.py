"""Token and grant management operations, each declared once
(``powercontext.operations``).

Who may do what is decided by the services and selectors (``rules.py``), with
the caller's grants read now (``Context.current_principal``): a token that just
became a scope's admin is never refused for a stale cache. A token the caller
may not see answers 404, so token ids cannot be probed.
"""

from __future__ import annotations

from typing import Any

from powercontext.operations import (
    ANY_TOKEN,
    READ_ONLY,
    Context,
    Given,
    Listing,
    Operation,
    Route,
    ToolSpec,
    decided_by_call,
    writes,
)
from powercontext.pages import Page
from powercontext.principals import Role

from . import schemas, selectors, services
from .inputs import (
    GrantInput,
    TokenExpirySet,
    TokenGrantPath,
    TokenListQuery,
    TokenMint,
    TokenPath,
    TokenRotate,
)
from .renderers import minted_body, token_body

TOKENS = ("tokens",)
TOKEN = "tokens/<str:token_id>"  # noqa: S105 - a route
_ADMIN = "Needs an admin grant on every scope involved ('*:admin' for '*')."
# Decided by the access rules of the services, on the scopes involved.
_BY_RULES = decided_by_call("admin")

TOKEN_COLLECTION = Route("token-collection", "tokens")
TOKEN_DETAIL = Route("token-detail", TOKEN)


def _token_list(given: Given, context: Context) -> Page[Any]:
    return selectors.token_list(
        caller=context.current_principal(),
        scope_id=given.query.scope_id,
        position=context.position,
        limit=given.query.limit,
    )


def _mint(given: Given, context: Context) -> Any:
    data = given.body
    return services.token_mint(
        caller=context.current_principal(),
        name=data.name,
        grants=data.grant_pairs(),
        expires_at=data.expires_at,
        request_id=context.request_id,
    )


def _token_get(given: Given, context: Context) -> Any:
    return selectors.token_get(
        caller=context.current_principal(), token_id=given.path.token_id
    )


def _expiry_set(given: Given, context: Context) -> Any:
    return services.token_expiry_set(
        caller=context.current_principal(),
        token_id=given.path.token_id,
        expires_at=given.body.expires_at,
        request_id=context.request_id,
    )


def _revoke(given: Given, context: Context) -> Any:
    return services.token_revoke_by_id(
        caller=context.current_principal(),
        token_id=given.path.token_id,
        request_id=context.request_id,
    )


def _rotate(given: Given, context: Context) -> Any:
    return services.token_rotate(
        caller=context.current_principal(),
        token_id=given.path.token_id,
        grace_seconds=given.body.grace_seconds,
        request_id=context.request_id,
    )


def _grant_set(given: Given, context: Context) -> Any:
    return services.token_grant_set(
        caller=context.current_principal(),
        token_id=given.path.token_id,
        scope_id=given.body.scope,
        role=Role(given.body.role),
        request_id=context.request_id,
    )


def _grant_remove(given: Given, context: Context) -> Any:
    return services.token_grant_remove(
        caller=context.current_principal(),
        token_id=given.path.token_id,
        scope_id=given.path.scope,
        request_id=context.request_id,
    )


def _minted(token_secret: tuple[Any, str]) -> Any:
    return minted_body(*token_secret)


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "list_tokens",
        "GET",
        TOKEN_COLLECTION,
        ANY_TOKEN,
        _token_list,
        token_body,
        TOKENS,
        query=TokenListQuery,
        listing=Listing("tokens", lambda given: (given.query.scope_id,)),
        answers={200: schemas.TokenPage},
        errors=(400, 403, 410),
        tool=ToolSpec(
            "list_tokens",
            "List the tokens whose grants lie within the scopes you administer, "
            "optionally those reaching one scope_id; never their secrets.",
            READ_ONLY,
        ),
    ),
    Operation(
        "mint_token",
        "POST",
        TOKEN_COLLECTION,
        _BY_RULES,
        _mint,
        _minted,
        TOKENS,
        body=TokenMint,
        status=201,
        answers={201: schemas.MintedToken},
        errors=(403, 404),
        tool=ToolSpec(
            "mint_token",
            "Mint a token acting as name, with grants (scope and role each) and an "
            "optional expires_at. The secret is in this result only: hand it to "
            "its holder, never store it in a note or Source. " + _ADMIN,
            writes(destructive=False, idempotent=False),
        ),
    ),
    Operation(
        "get_token",
        "GET",
        TOKEN_DETAIL,
        _BY_RULES,
        _token_get,
        token_body,
        TOKENS,
        path=TokenPath,
        answers={200: schemas.TokenDescriptor},
        errors=(404,),
        tool=ToolSpec(
            "get_token",
            "Read one token by token_id: name, grants, expiry, last use; never its "
            "secret.",
            READ_ONLY,
        ),
    ),
    Operation(
        "set_token_expiry",
        "PATCH",
        TOKEN_DETAIL,
        _BY_RULES,
        _expiry_set,
        token_body,
        TOKENS,
        path=TokenPath,
        body=TokenExpirySet,
        answers={200: schemas.TokenDescriptor},
        errors=(403, 404, 409),
        tool=ToolSpec(
            "set_token_expiry",
            "Set a token's expires_at (null: never). Never beyond your own token's "
            "expiry. " + _ADMIN,
            writes(destructive=False, idempotent=True),
        ),
    ),
    Operation(
        "revoke_token",
        "POST",
        Route("token-revoke", f"{TOKEN}/revoke"),
        _BY_RULES,
        _revoke,
        token_body,
        TOKENS,
        path=TokenPath,
        answers={200: schemas.TokenDescriptor},
        errors=(403, 404),
        tool=ToolSpec(
            "revoke_token",
            "Revoke a token now; its holder is refused from then on. " + _ADMIN,
            writes(destructive=True, idempotent=True),
        ),
    ),
    Operation(
        "rotate_token",
        "POST",
        Route("token-rotate", f"{TOKEN}/rotate"),
        _BY_RULES,
        _rotate,
        _minted,
        TOKENS,
        path=TokenPath,
        body=TokenRotate,
        status=201,
        answers={201: schemas.MintedToken},
        errors=(403, 404, 409),
        tool=ToolSpec(
            "rotate_token",
            "Give a token a new secret with the same grants; the old secret stops "
            "now or grace_seconds later. The new secret is in this result only. "
            + _ADMIN,
            writes(destructive=True, idempotent=False),
        ),
    ),
    Operation(
        "add_token_grant",
        "POST",
        Route("token-grants", f"{TOKEN}/grants"),
        _BY_RULES,
        _grant_set,
        token_body,
        TOKENS,
        path=TokenPath,
        body=GrantInput,
        answers={200: schemas.TokenDescriptor},
        errors=(403, 404, 409),
        tool=ToolSpec(
            "add_token_grant",
            "Grant a token a role on a scope (or '*'); a grant it already holds is "
            "replaced. No token can raise its own rights. " + _ADMIN,
            writes(destructive=False, idempotent=True),
        ),
    ),
    Operation(
        "remove_token_grant",
        "DELETE",
        Route("token-grant-detail", f"{TOKEN}/grants/<str:scope>"),
        _BY_RULES,
        _grant_remove,
        token_body,
        TOKENS,
        path=TokenGrantPath,
        answers={200: schemas.TokenDescriptor},
        errors=(403, 404),
        tool=ToolSpec(
            "remove_token_grant",
            "Remove a token's own grant on a scope. " + _ADMIN,
            writes(destructive=True, idempotent=True),
        ),
    ),
)
