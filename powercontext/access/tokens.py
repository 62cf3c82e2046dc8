"""Token services: mint, revoke, grant, and resolve a presented bearer token."""

from __future__ import annotations

import hashlib
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from powercontext.db.constraints import violates_constraint
from powercontext.db.cursors import prepared_cursor
from powercontext.exceptions import InvalidRequest, NotFound
from powercontext.principals import Grant, Principal, Role
from powercontext.text import text_problem

from .changes import SYSTEM, Actor, change_record
from .identities import principal_claim
from .models import (
    GRANT_SCOPE_MAX_LENGTH,
    PREFIX_MAX_LENGTH,
    PRINCIPAL_MAX_LENGTH,
    AccessAction,
    ApiToken,
    PrincipalGrant,
    TokenGrant,
)

TOKEN_PREFIX = "pct_"  # noqa: S105 - the public marker of our tokens
VISIBLE_PREFIX_LENGTH = 12


class TokenRejected(Exception):
    """The token is unknown, revoked or expired (the reason is only logged)."""


def token_hash(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def _text_problem(value: str, *, max_length: int) -> str | None:
    """Why ``value`` cannot be a principal or grant scope as given, or None."""
    problem = text_problem(value)
    if problem:
        return problem
    if not value.strip():
        return "must not be blank"
    if len(value) > max_length:
        return f"must have at most {max_length} characters, not {len(value)}"
    return None


def _shown(value: str) -> str:
    """``value`` quoted for a message, cut short when long."""
    return repr(value) if len(value) <= 40 else repr(value[:40]) + "…"


def token_request_check(
    *,
    principal: str,
    grants: Iterable[tuple[str, Role]],
    expires_at: datetime | None,
    now: datetime,
) -> None:
    """Refuse a token the database cannot store as given, or that is born useless.

    Raises ``InvalidRequest`` (``details.field`` is ``principal``, ``grants`` or
    ``expires_at``) for: a principal or grant scope that is blank, too long for
    its column, or not storable text; one scope granted two different roles; an
    expiry that is not after ``now``. Reads nothing, writes nothing.
    """
    problem = _text_problem(principal, max_length=PRINCIPAL_MAX_LENGTH)
    if problem:
        raise InvalidRequest.for_field(
            "principal", "invalid", f"The principal name {problem}."
        )
    roles: dict[str, set[Role]] = {}
    for scope_id, role in grants:
        problem = _text_problem(scope_id, max_length=GRANT_SCOPE_MAX_LENGTH)
        if problem:
            raise InvalidRequest.for_field(
                "grants", "invalid", f"The grant scope {_shown(scope_id)} {problem}."
            )
        roles.setdefault(scope_id, set()).add(role)
    for scope_id, granted in roles.items():
        if len(granted) > 1:
            raise InvalidRequest.for_field(
                "grants",
                "duplicate_scope",
                f"The scope {scope_id!r} is granted more than one role "
                f"({', '.join(sorted(granted))}); give it one.",
            )
    if expires_at is not None and expires_at <= now:
        raise InvalidRequest.for_field(
            "expires_at",
            "not_in_future",
            f"The expiry {expires_at.isoformat()} is not in the future.",
        )


def token_create(
    *,
    principal: str,
    grants: Iterable[tuple[str, Role]],
    expires_at: datetime | None = None,
    actor: Actor = SYSTEM,
    owner: str | None = None,
    detail: dict[str, Any] | None = None,
) -> tuple[ApiToken, str]:
    """Mint a token for ``principal`` with ``grants``; returns the row and the secret.

    The secret is returned once and never stored. ``principal`` is claimed for
    ``owner`` first (``identities.principal_claim``: created when new; None is an
    operator, who may name any principal). Raises ``InvalidRequest`` for what
    ``token_request_check`` refuses and ``PrincipalNotYours``, with nothing
    written. Writes the ``mint`` change record (by ``actor``, with ``detail``)
    with the token. Runs in its own transaction, or joins the caller's (the
    admin wraps its add view in one).
    """
    grant_list = list(dict.fromkeys(grants))
    now = timezone.now()
    token_request_check(
        principal=principal, grants=grant_list, expires_at=expires_at, now=now
    )
    for _ in range(5):
        raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
        try:
            with transaction.atomic():
                principal_claim(name=principal, owner=owner, actor=actor, at=now)
                token = ApiToken.objects.create(
                    prefix=raw[:VISIBLE_PREFIX_LENGTH],
                    token_hash=token_hash(raw),
                    principal=principal,
                    created_at=now,
                    expires_at=expires_at,
                    created_by=actor.name,
                )
                TokenGrant.objects.bulk_create(
                    TokenGrant(token=token, scope_id=scope_id, role=role)
                    for scope_id, role in grant_list
                )
                change_record(
                    actor=actor,
                    action=AccessAction.MINT,
                    at=now,
                    token=token,
                    grants=[f"{scope}:{role}" for scope, role in grant_list],
                    expires_at=None if expires_at is None else expires_at.isoformat(),
                    **(detail or {}),
                )
            return token, raw
        except IntegrityError as exc:
            if violates_constraint(exc, TokenGrant, "api_grant_token_scope_uniq"):
                raise  # token_request_check lets no duplicate scope through
            continue  # a visible-prefix (or hash) collision: mint another
    raise RuntimeError("could not mint a token with a unique prefix")


def token_revoke(*, prefix: str, actor: Actor = SYSTEM) -> ApiToken:
    """Revoke the token whose visible prefix is ``prefix``; raises ``NotFound``.

    Idempotent: revoking a revoked token keeps its first revocation time (and
    writes no second record). A prefix that no token can have (unstorable text,
    longer than the column) is ``NotFound`` without a query, so it never
    reaches the database driver.
    """
    if text_problem(prefix) or len(prefix) > PREFIX_MAX_LENGTH:
        raise NotFound(f"No token has the prefix {prefix!r}.")
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().filter(prefix=prefix).first()
        if token is None:
            raise NotFound(f"No token has the prefix {prefix!r}.")
        token_revoke_locked(token, actor=actor, at=timezone.now())
    return token


def token_revoke_locked(token: ApiToken, *, actor: Actor, at: datetime) -> None:
    """Revoke ``token`` (a row locked by the caller's transaction) and record it."""
    if not token.revoked:
        token.revoked = True
        # A rotated-away secret keeps the earlier of its scheduled end and now.
        if token.revoked_at is None or at < token.revoked_at:
            token.revoked_at = at
        token.save(update_fields=["revoked", "revoked_at"])
        change_record(actor=actor, action=AccessAction.REVOKE, at=at, token=token)
    token_forget(token)


def token_forget(token: ApiToken) -> None:
    """Drop ``token`` from this process's cache of accepted tokens."""
    _accepted.pop(token.token_hash, None)


# Plain SQL: this runs on every request, and compiling the ORM join costs more
# than the query itself.
# The token's own grants, then its principal's (every row repeats the token's
# columns; the first row is always a token-grant row, NULL grant when it has none).
_TOKEN = ApiToken._meta.db_table
_COLUMNS = (
    "t.id, t.principal, t.revoked, t.expires_at, t.last_used_at, t.token_hash, "
    "t.revoked_at"
)
_TOKEN_WITH_GRANTS = (
    f"SELECT 0, {_COLUMNS}, g.scope_id, g.role FROM {_TOKEN} t "
    f"LEFT JOIN {TokenGrant._meta.db_table} g ON g.token_id = t.id "
    "WHERE t.{key} = %s "
    f"UNION ALL SELECT 1, {_COLUMNS}, p.scope_id, p.role FROM {_TOKEN} t "
    f"JOIN {PrincipalGrant._meta.db_table} p ON p.principal = t.principal "
    "WHERE t.{key} = %s ORDER BY 1"
)
_BY_HASH = _TOKEN_WITH_GRANTS.format(key="token_hash")
_BY_ID = _TOKEN_WITH_GRANTS.format(key="id")


def _aware(value: datetime | str | None) -> datetime | None:
    """A raw-cursor datetime as an aware UTC value (SQLite returns naive ones)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


@dataclass(frozen=True)
class _Accepted:
    """A token this process accepted: who it is, until when, read when."""

    principal: Principal
    expires_at: datetime | None
    read_at: float  # time.monotonic()


# Accepted tokens by hash; bounded, and emptied when full (docs/decisions/0008).
_accepted: dict[str, _Accepted] = {}
_ACCEPTED_MAX = 10_000


def token_authenticate(raw: str) -> Principal:
    """Resolve a presented token and its grants.

    A token this process accepted less than ``POWERCONTEXT_TOKEN_CACHE_SECONDS``
    ago is answered from memory (its expiry still checked against now) with
    ``fresh=False``: its grants may be that old. ``authorize`` reads them again
    before it refuses, so a new grant is never refused; a revoked token or a
    removed grant stops working in every worker within that time (at once in the
    worker that revoked it). Otherwise one query reads the token and its grants.

    Raises ``TokenRejected`` for unknown, revoked or expired tokens. Records the use
    at most once per ``POWERCONTEXT_TOKEN_LAST_USED_INTERVAL`` seconds, with a
    conditional UPDATE so concurrent requests do not all write.
    """
    digest = token_hash(raw)
    ttl = settings.POWERCONTEXT_TOKEN_CACHE_SECONDS
    cached = _accepted.get(digest)
    if cached is not None and time.monotonic() - cached.read_at < ttl:
        if cached.expires_at is not None and cached.expires_at <= timezone.now():
            raise TokenRejected("expired token")
        return cached.principal
    return _token_read(_BY_HASH, digest)


def principal_reload(principal: Principal) -> Principal:
    """``principal`` with its token's grants read from the database now.

    Raises ``TokenRejected`` if the token was revoked or expired meanwhile.
    Principals without a token (static, local) are returned as they are.
    """
    if principal.fresh or principal.token_id is None:
        return principal
    return _token_read(_BY_ID, principal.token_id)


def _token_read(query: str, key: str | int) -> Principal:
    """Read one token and its grants (one query), and cache it when accepted."""
    with prepared_cursor() as cursor:
        cursor.execute(query, [key, key])
        rows = [row[1:] for row in cursor.fetchall()]
    if not rows:
        raise TokenRejected("unknown token")
    token_id, name, revoked = rows[0][:3]
    expires_at, last_used_at = (_aware(value) for value in rows[0][3:5])
    digest = rows[0][5]
    # A rotated-away token is revoked at the end of its grace (revoked_at in
    # the future until then); that end holds whatever its expiry says.
    revoked_at = _aware(rows[0][6])
    now = timezone.now()
    if revoked or (revoked_at is not None and revoked_at <= now):
        raise TokenRejected("revoked token")
    if expires_at is not None and expires_at <= now:
        raise TokenRejected("expired token")
    if revoked_at is not None and (expires_at is None or revoked_at < expires_at):
        expires_at = revoked_at  # what the cache checks against now
    interval = timedelta(seconds=settings.POWERCONTEXT_TOKEN_LAST_USED_INTERVAL)
    if last_used_at is None or now - last_used_at >= interval:
        ApiToken.objects.filter(pk=token_id).filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lte=now - interval)
        ).update(last_used_at=now)
    grants = tuple(
        Grant(scope_id, Role(role))
        for *_, scope_id, role in rows
        if scope_id is not None
    )
    if settings.POWERCONTEXT_TOKEN_CACHE_SECONDS > 0:
        if len(_accepted) >= _ACCEPTED_MAX:
            _accepted.clear()
        cached = Principal(name=name, grants=grants, token_id=token_id, fresh=False)
        _accepted[digest] = _Accepted(cached, expires_at, time.monotonic())
    return Principal(name=name, grants=grants, token_id=token_id)
