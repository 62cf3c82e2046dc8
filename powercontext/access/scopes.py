"""Where access meets the scopes of ``sources``: a grant must name an existing
scope, and a new scope's creator administers it.

The one module of access that imports ``sources`` (docs/architecture.md, "What
may import what"). ``sources`` never imports access: it sends ``scope_created``
(``sources/signals.py``), and this module's receiver - connected when
``AccessConfig.ready`` imports the module - writes the creator's grant in the
creating transaction.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.dispatch import receiver

from powercontext.principals import ALL_SCOPES, Principal, Role
from sources.exceptions import ScopeNotFound
from sources.selectors import scope_ids_unknown
from sources.signals import scope_created

from .grants import principal_grant_add


def granted_scopes_unknown(scope_ids: Iterable[str]) -> list[str]:
    """The granted scope ids that name no scope (``*`` always exists), in order.

    The ids must be storable text (``token_request_check`` first); one query.
    """
    return scope_ids_unknown(
        scope_ids=(scope_id for scope_id in scope_ids if scope_id != ALL_SCOPES)
    )


def granted_scopes_exist_or_refuse(scope_ids: Iterable[str]) -> None:
    """Raise ``ScopeNotFound`` (404, ``details.scope_ids``) for any granted scope
    id that names no scope."""
    if unknown := granted_scopes_unknown(scope_ids):
        raise ScopeNotFound(details={"scope_ids": unknown})


@receiver(scope_created, dispatch_uid="access.scope_creator_made_admin")
def scope_creator_made_admin(
    sender: object,
    *,
    scope_id: str,
    principal: Principal,
    request_id: str,
    **kwargs: Any,
) -> None:
    """Receiver of ``scope_created``: every token of the creating principal gets
    ``admin`` on the new scope, recorded as an access change, in the creating
    transaction. A principal without a token (the local or static-token caller)
    already reaches every scope and holds no grants."""
    if principal.token_id is not None:
        principal_grant_add(
            principal=principal,
            scope_id=scope_id,
            role=Role.ADMIN,
            request_id=request_id,
        )
