"""Token and grant management over the API (docs/api.md): every write.

Each service runs in one durable transaction: it locks the token it changes,
checks who may (``rules.py``), writes the change and its append-only record
(``changes.change_record``) and drops the token from this process's cache of
accepted tokens (other workers see the change within
``POWERCONTEXT_TOKEN_CACHE_SECONDS``, docs/decisions/0008). ``caller`` is the
principal with grants read now (``powercontext.api.permissions.current``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from powercontext.exceptions import InvalidRequest
from powercontext.principals import Principal, Role

from .changes import Actor, change_record
from .exceptions import (
    BeyondYourLifetime,
    GrantNotFound,
    NotYourScope,
    TokenRevoked,
)
from .identities import principal_name_for, principal_owned_or_refuse
from .models import AccessAction, ApiToken, PrincipalGrant, TokenGrant
from .rules import (
    administers_everything,
    lifetime_allows,
    may_grant,
    scope_managed_or_refuse,
    token_touchable_or_refuse,
)
from .scopes import granted_scopes_exist_or_refuse
from .selectors import TokenView, token_reach, token_seen, token_view
from .tokens import token_create, token_forget, token_request_check, token_revoke_locked


def token_mint(
    *,
    caller: Principal,
    name: str,
    grants: list[tuple[str, Role]],
    expires_at: datetime | None,
    request_id: str,
) -> tuple[ApiToken, str]:
    """Mint a token acting as the principal ``name`` gives; returns the row and
    its secret.

    A ``*:admin`` caller names any principal but a reserved one; anyone else
    gets ``<caller>/<name>``, created on first use and its own
    (``identities``). Raises ``InvalidRequest`` (422) for what
    ``token_request_check`` refuses and for a reserved name; ``NotYourScope``
    (403) for a grant on a scope ``caller`` does not administer (``*`` needs
    ``*:admin``), or a principal whose own grants reach one (its tokens would
    inherit them); ``PrincipalNotYours`` (403) for a principal someone else
    controls; ``BeyondYourLifetime`` (403) for an expiry later than the
    caller's own; ``ScopeNotFound`` (404) for a scope that does not exist.
    Nothing is written when it raises.
    """
    owner = None if administers_everything(caller) else caller.name
    name = principal_name_for(requested=name, owner=owner)
    token_request_check(
        principal=name, grants=grants, expires_at=expires_at, now=timezone.now()
    )
    for scope_id, _ in grants:
        scope_managed_or_refuse(caller, scope_id)
    with transaction.atomic(durable=True):
        principal_owned_or_refuse(name=name, owner=owner)
        inherited = PrincipalGrant.objects.filter(principal=name).values_list(
            "scope_id", flat=True
        )
        if not all(may_grant(caller, scope_id) for scope_id in inherited):
            raise NotYourScope(
                f"The principal {name!r} holds grants on scopes you do not "
                "administer, which its tokens inherit; only '*:admin' mints for it."
            )
        _lifetime_or_refuse(caller, expires_at)
        granted_scopes_exist_or_refuse(scope_id for scope_id, _ in grants)
        return token_create(
            principal=name,
            grants=grants,
            expires_at=expires_at,
            actor=_actor(caller, request_id),
            owner=owner,
        )


def token_revoke_by_id(
    *, caller: Principal, token_id: int, request_id: str
) -> TokenView:
    """Revoke token ``token_id`` (idempotent); ``TokenNotFound``, ``NotYourScope``."""
    with transaction.atomic(durable=True):
        token = _touchable(caller, token_id)
        token_revoke_locked(token, actor=_actor(caller, request_id), at=timezone.now())
    return _view(token, caller)


def token_rotate(
    *, caller: Principal, token_id: int, grace_seconds: int, request_id: str
) -> tuple[ApiToken, str]:
    """A new secret for token ``token_id``'s principal, grants and expiry.

    The old token is revoked at once, or when ``grace_seconds`` from now have
    passed (a scheduled revocation nothing lifts). A new secret is a new token
    of the principal, so the rule of minting holds (``identities``): a caller
    without ``*:admin`` rotates only tokens of its own principal or of one it
    owns. Raises ``TokenNotFound``, ``NotYourScope``, ``PrincipalNotYours``,
    ``TokenRevoked`` (409, also for an expired token).
    """
    actor = _actor(caller, request_id)
    with transaction.atomic(durable=True):
        old = _touchable(caller, token_id)
        now = timezone.now()
        if _retired(old) or (old.expires_at is not None and old.expires_at <= now):
            raise TokenRevoked()
        own_principal = administers_everything(caller) or old.principal == caller.name
        token, raw = token_create(
            principal=old.principal,
            grants=[(grant.scope_id, Role(grant.role)) for grant in old.grants.all()],
            expires_at=old.expires_at,
            actor=actor,
            owner=None if own_principal else caller.name,
            detail={"rotated_from": old.pk},
        )
        if grace_seconds == 0:
            token_revoke_locked(old, actor=actor, at=now)
        else:
            # A revocation scheduled for the grace's end, not an expiry: no
            # route re-dates or un-revokes it (``_retired``), so the old secret
            # is dead for good once the grace ends.
            old.revoked_at = now + timedelta(seconds=grace_seconds)
            old.save(update_fields=["revoked_at"])
            token_forget(old)
        change_record(
            actor=actor,
            action=AccessAction.ROTATE,
            at=now,
            token=old,
            new_token_id=token.pk,
            grace_seconds=grace_seconds,
        )
    return token, raw


def token_expiry_set(
    *,
    caller: Principal,
    token_id: int,
    expires_at: datetime | None,
    request_id: str,
) -> TokenView:
    """Give token ``token_id`` a new expiry (None: never).

    Raises ``InvalidRequest`` (``not_in_future``), ``TokenNotFound``,
    ``NotYourScope``, ``TokenRevoked`` (also for a token rotated away, whose
    revocation is scheduled), and ``BeyondYourLifetime`` when the expiry is
    later than the caller's own - so a token never extends itself.
    """
    now = timezone.now()
    if expires_at is not None and expires_at <= now:
        raise InvalidRequest.for_field(
            "expires_at",
            "not_in_future",
            f"The expiry {expires_at.isoformat()} is not in the future.",
        )
    with transaction.atomic(durable=True):
        token = _touchable(caller, token_id)
        if _retired(token):
            raise TokenRevoked()
        _lifetime_or_refuse(caller, expires_at)
        before = token.expires_at
        token.expires_at = expires_at
        token.save(update_fields=["expires_at"])
        change_record(
            actor=_actor(caller, request_id),
            action=AccessAction.EXPIRY,
            at=now,
            token=token,
            before=None if before is None else before.isoformat(),
            after=None if expires_at is None else expires_at.isoformat(),
        )
        token_forget(token)
    return _view(token, caller)


def token_grant_set(
    *, caller: Principal, token_id: int, scope_id: str, role: Role, request_id: str
) -> TokenView:
    """Give token ``token_id`` ``role`` on ``scope_id`` (replacing its role there).

    Raises ``TokenNotFound`` for a token ``caller`` may not see (as
    ``get_token``); ``NotYourScope`` unless ``caller`` administers ``scope_id``
    (``*``: ``*:admin``), so no token - the caller's own included - ever gets
    more than its granter holds; ``TokenRevoked``, ``ScopeNotFound``.
    """
    with transaction.atomic(durable=True):
        token = token_seen(caller=caller, token_id=token_id, lock=True).token
        scope_managed_or_refuse(caller, scope_id)
        if _retired(token):
            raise TokenRevoked()
        granted_scopes_exist_or_refuse([scope_id])
        grant = TokenGrant.objects.filter(token=token, scope_id=scope_id).first()
        previous = None if grant is None else grant.role
        if grant is None:
            TokenGrant.objects.create(token=token, scope_id=scope_id, role=role)
        elif grant.role != role:
            grant.role = role
            grant.save(update_fields=["role"])
        if previous != role:
            change_record(
                actor=_actor(caller, request_id),
                action=AccessAction.GRANT_ADD,
                at=timezone.now(),
                token=token,
                scope_id=scope_id,
                role=role,
                previous_role=previous,
            )
        token_forget(token)
    return _view(token, caller)


def token_grant_remove(
    *, caller: Principal, token_id: int, scope_id: str, request_id: str
) -> TokenView:
    """Take token ``token_id``'s own grant on ``scope_id`` away.

    Raises ``TokenNotFound`` for a token ``caller`` may not see (as
    ``get_token``); ``NotYourScope`` unless ``caller`` administers ``scope_id``;
    ``GrantNotFound`` when the token holds none there.
    """
    with transaction.atomic(durable=True):
        token = token_seen(caller=caller, token_id=token_id, lock=True).token
        scope_managed_or_refuse(caller, scope_id)
        grant = TokenGrant.objects.filter(token=token, scope_id=scope_id).first()
        if grant is None:
            raise GrantNotFound()
        TokenGrant.objects.filter(pk=grant.pk).delete()
        change_record(
            actor=_actor(caller, request_id),
            action=AccessAction.GRANT_REMOVE,
            at=timezone.now(),
            token=token,
            scope_id=scope_id,
            role=grant.role,
        )
        token_forget(token)
    return _view(token, caller)


def _retired(token: ApiToken) -> bool:
    """Revoked, or rotated away (revoked when its grace ends): never revived."""
    return token.revoked or token.revoked_at is not None


def _actor(caller: Principal, request_id: str) -> Actor:
    return Actor(caller.name, caller.token_id, request_id)


def _touchable(caller: Principal, token_id: int) -> ApiToken:
    """Token ``token_id``, locked, if ``caller`` administers every scope it reaches.

    ``TokenNotFound`` when ``caller`` may not see it (``token_seen``),
    ``NotYourScope`` when it sees it but does not administer all it reaches.
    """
    seen = token_seen(caller=caller, token_id=token_id, lock=True)
    token_touchable_or_refuse(caller, seen.reached())
    return seen.token


def _view(token: ApiToken, caller: Principal) -> TokenView:
    _, inherited = token_reach(token)
    return token_view(token, caller=caller, principal_grants=inherited)


def _lifetime_or_refuse(caller: Principal, expires_at: datetime | None) -> None:
    """``BeyondYourLifetime`` when ``expires_at`` outlives the caller's token."""
    caller_expires_at = (
        None
        if caller.token_id is None
        else ApiToken.objects.filter(pk=caller.token_id)
        .values_list("expires_at", flat=True)
        .first()
    )
    if not lifetime_allows(caller_expires_at=caller_expires_at, expires_at=expires_at):
        raise BeyondYourLifetime()
