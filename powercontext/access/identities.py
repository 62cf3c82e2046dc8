"""Who a token is: which principal a minter may name (docs/decisions/0031).

A token acts as its principal, and holds that principal's grants - a scope's
creator administers it through a grant to its principal - so naming a principal
is giving its rights, now and later. The rule:

- an operator (a ``*:admin`` caller, ``createtoken``, a superuser in the admin)
  names any principal, existing or new, except the reserved names;
- anyone else names a principal *under its own name*: ``name`` becomes
  ``<owner>/<name>``, created on first use with that owner, and usable again only
  by it (``PrincipalNotYours`` otherwise, say for a name an operator created).

So a principal's tokens are all minted by whoever controls it, and a scope
admin can never mint into an identity that someone else's grants reach later.
"""

from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction

from powercontext.db.constraints import violates_constraint
from powercontext.exceptions import InvalidRequest
from powercontext.principals import (
    LOCAL_PRINCIPAL,
    MIGRATION_ACTOR,
    SEED_PRINCIPAL,
    STATIC_TOKEN_PRINCIPAL,
)

from .changes import SYSTEM, Actor, change_record
from .exceptions import PrincipalNotYours
from .models import AccessAction, PrincipalRecord

OWNER_SEPARATOR = "/"
# Names that act without a token of their own (the static token, make run's local
# caller; ``localsetup`` mints ``local`` itself) or that records name as the actor
# when no caller acted (the system, the seeding command, a migration); a command
# records itself as ``cli:<command>``, a superuser in the admin as ``admin:<user>``.
RESERVED_NAMES = frozenset(
    {
        STATIC_TOKEN_PRINCIPAL,
        LOCAL_PRINCIPAL,
        SYSTEM.name,
        SEED_PRINCIPAL,
        MIGRATION_ACTOR,
    }
)
RESERVED_PREFIXES = ("admin:", "cli:")


def principal_reserved(name: str) -> bool:
    return name in RESERVED_NAMES or name.startswith(RESERVED_PREFIXES)


def principal_name_for(*, requested: str, owner: str | None) -> str:
    """The principal a mint asking for ``requested`` acts as.

    ``owner`` None is an operator: ``requested`` itself, or ``InvalidRequest``
    (``details.field`` ``name``, reason ``reserved``) for a reserved name.
    Otherwise ``<owner>/<requested>``. Reads nothing.
    """
    if owner is not None:
        return f"{owner}{OWNER_SEPARATOR}{requested}"
    if principal_reserved(requested):
        raise InvalidRequest.for_field(
            "name",
            "reserved",
            f"The principal name {requested!r} is reserved "
            f"({', '.join(sorted(RESERVED_NAMES))}, admin:..., cli:...); "
            "choose another.",
        )
    return requested


def principal_owned_or_refuse(*, name: str, owner: str | None) -> None:
    """``PrincipalNotYours`` unless ``owner`` may mint for principal ``name``.

    An operator (``owner`` None) may mint for any; anyone else for a new name or
    one it owns. Reads one row; ``principal_claim`` enforces the same at insert.
    """
    if owner is None:
        return
    existing = (
        PrincipalRecord.objects.filter(name=name)
        .values_list("owner", flat=True)
        .first()
    )
    if existing is not None and existing != owner:
        raise PrincipalNotYours()


def principal_claim(
    *, name: str, owner: str | None, actor: Actor, at: datetime
) -> None:
    """Make sure principal ``name`` exists and ``owner`` may mint for it.

    Creates it (owned by ``owner``, blank for an operator) with a
    ``principal_create`` change record when it is new; raises
    ``PrincipalNotYours`` when it exists and ``owner`` is neither None nor its
    owner. Insert first, then classify, so two concurrent first mints agree. Runs
    inside the caller's transaction.
    """
    try:
        with transaction.atomic():
            PrincipalRecord.objects.create(
                name=name, owner=owner or "", created_by=actor.name, created_at=at
            )
    except IntegrityError as exc:
        if not violates_constraint(exc, PrincipalRecord, "api_principal_name_uniq"):
            raise
        principal_owned_or_refuse(name=name, owner=owner)
        return
    change_record(
        actor=actor,
        action=AccessAction.PRINCIPAL_CREATE,
        at=at,
        principal=name,
        owner=owner or "",
    )
