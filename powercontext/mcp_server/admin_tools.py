"""Tools for the people and agents who administer access (spec/access.md 1): the
token and grant operations, each the HTTP operation's view as for every other
tool. Needs an admin grant, as over HTTP; a minted or rotated secret is in the
tool's result once, as in the HTTP answer."""

from __future__ import annotations

import mcp_types as types

from powercontext.access import views as access

from .catalogue import READ_ONLY, Tool


def _writes(*, destructive: bool, idempotent: bool) -> types.ToolAnnotations:
    return types.ToolAnnotations(
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


_ADMIN = "Needs an admin grant on every scope involved ('*:admin' for '*')."

ACCESS_TOOLS: tuple[Tool, ...] = (
    Tool(
        "list_tokens",
        access.TokenCollectionView,
        "get",
        "List the tokens whose grants lie within the scopes you administer, "
        "optionally those reaching one scope_id; never their secrets.",
        READ_ONLY,
    ),
    Tool(
        "mint_token",
        access.TokenCollectionView,
        "post",
        "Mint a token acting as name, with grants (scope and role each) and an "
        "optional expires_at. The secret is in this result only: hand it to its "
        f"holder, never store it in a note or Source. {_ADMIN}",
        _writes(destructive=False, idempotent=False),
    ),
    Tool(
        "get_token",
        access.TokenDetailView,
        "get",
        "Read one token by token_id: name, grants, expiry, last use; never its secret.",
        READ_ONLY,
    ),
    Tool(
        "set_token_expiry",
        access.TokenDetailView,
        "patch",
        "Set a token's expires_at (null: never). Never beyond your own token's "
        f"expiry. {_ADMIN}",
        _writes(destructive=False, idempotent=True),
    ),
    Tool(
        "revoke_token",
        access.TokenRevokeView,
        "post",
        f"Revoke a token now; its holder is refused from then on. {_ADMIN}",
        _writes(destructive=True, idempotent=True),
    ),
    Tool(
        "rotate_token",
        access.TokenRotateView,
        "post",
        "Give a token a new secret with the same grants; the old secret stops now "
        f"or grace_seconds later. The new secret is in this result only. {_ADMIN}",
        _writes(destructive=True, idempotent=False),
    ),
    Tool(
        "add_token_grant",
        access.TokenGrantCollectionView,
        "post",
        "Grant a token a role on a scope (or '*'); a grant it already holds is "
        f"replaced. No token can raise its own rights. {_ADMIN}",
        _writes(destructive=False, idempotent=True),
    ),
    Tool(
        "remove_token_grant",
        access.TokenGrantDetailView,
        "delete",
        f"Remove a token's own grant on a scope. {_ADMIN}",
        _writes(destructive=True, idempotent=True),
    ),
)
