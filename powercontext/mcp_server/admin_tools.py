"""Tools for administering access and the lifecycle (docs/api.md): each the HTTP
operation's view, as for every other tool, with its grants (admin, contributor for
a close) and errors. A minted or rotated secret is in the tool's result once, as
in the HTTP answer."""

from __future__ import annotations

from lifecycle import views as lifecycle
from powercontext.access import views as access

from .catalogue import READ_ONLY, Tool, writes

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
        writes(destructive=False, idempotent=False),
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
        writes(destructive=False, idempotent=True),
    ),
    Tool(
        "revoke_token",
        access.TokenRevokeView,
        "post",
        f"Revoke a token now; its holder is refused from then on. {_ADMIN}",
        writes(destructive=True, idempotent=True),
    ),
    Tool(
        "rotate_token",
        access.TokenRotateView,
        "post",
        "Give a token a new secret with the same grants; the old secret stops now "
        f"or grace_seconds later. The new secret is in this result only. {_ADMIN}",
        writes(destructive=True, idempotent=False),
    ),
    Tool(
        "add_token_grant",
        access.TokenGrantCollectionView,
        "post",
        "Grant a token a role on a scope (or '*'); a grant it already holds is "
        f"replaced. No token can raise its own rights. {_ADMIN}",
        writes(destructive=False, idempotent=True),
    ),
    Tool(
        "remove_token_grant",
        access.TokenGrantDetailView,
        "delete",
        f"Remove a token's own grant on a scope. {_ADMIN}",
        writes(destructive=True, idempotent=True),
    ),
)

LIFECYCLE_TOOLS: tuple[Tool, ...] = (
    Tool(
        "close_session",
        lifecycle.SessionCloseView,
        "post",
        "Close a session when its work is finished: from then on its working notes "
        "are unavailable as evidence ('closed'), and new notes and envelope writes "
        "are refused (409 session_closed). Closing again returns the same record. "
        "Needs a contributor grant.",
        writes(destructive=True, idempotent=True),
    ),
    Tool(
        "list_legal_holds",
        lifecycle.HoldCollectionView,
        "get",
        "List the scope's legal holds, newest first, released ones included. "
        "Needs an admin grant.",
        READ_ONLY,
    ),
    Tool(
        "set_legal_hold",
        lifecycle.HoldCollectionView,
        "post",
        "Put the scope, or one session of it (session_id), under a legal hold with "
        "a reason: nothing it covers is purged or redacted until the hold is "
        "released. Holds stack. Needs an admin grant.",
        writes(destructive=False, idempotent=False),
    ),
    Tool(
        "release_legal_hold",
        lifecycle.HoldReleaseView,
        "post",
        "Release one legal hold by hold_id, with a reason. Needs an admin grant.",
        writes(destructive=False, idempotent=True),
    ),
    Tool(
        "purge_working_notes",
        lifecycle.PurgeView,
        "post",
        "Tombstone the scope's working notes expired or closed longer ago than "
        "older_than_seconds (never held ones, never ones a committed handoff "
        "cites), and clear closed sessions' envelope notes. dry_run counts "
        "without changing anything. Needs an admin grant.",
        writes(destructive=True, idempotent=True),
    ),
    Tool(
        "redact_source",
        lifecycle.RedactView,
        "post",
        "Redact one Source (content or working note) with a recorded reason: its "
        "text and metadata are removed for good, its identity and digests stay as "
        "a tombstone. Refused while a legal hold applies. Needs an admin grant.",
        writes(destructive=True, idempotent=True),
    ),
)
