"""The host's replace (PUT) and the worker's overlay (PATCH) of an envelope."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import transaction

from powercontext.principals import Principal

from ..exceptions import NotHostKey, NotWorkerKey
from ..meta import same_value, sanitize_value
from ..meta_keys import Owner, known_owner, owner_of
from ..models import WriteOperation
from ..preconditions import IfMatch
from .writes import EnvelopeWritten, Meta, Writer, envelope_write, set_key


def envelope_replace(
    *,
    scope_id: str,
    session_id: str,
    meta: Mapping[str, Any],
    if_match: IfMatch | None,
    principal: Principal,
    request_id: str,
) -> EnvelopeWritten:
    """The host's replace: ``meta`` is the complete set of host-owned and ``x-`` keys.

    Host keys absent from ``meta`` are cleared; worker-owned keys are carried
    forward, and ``meta`` may name one only with exactly its current value.
    Creates the envelope when missing. Raises ``ScopeNotFound``,
    ``PreconditionFailed``, ``UnknownMetaKey``, ``NotHostKey``,
    ``InvalidMetaValue``, ``MetaTooLarge``. Takes the envelope row lock in one
    durable transaction.
    """

    def replace(current: Meta) -> Meta:
        result = {k: v for k, v in current.items() if owner_of(k) is Owner.WORKER}
        for key, value in meta.items():
            if known_owner(key) is Owner.WORKER:
                if key not in current or not same_value(value, current[key]):
                    raise NotHostKey(
                        key,
                        "worker_owned",
                        f"meta.{key} is worker-owned: a PUT may repeat it only with "
                        "exactly its current value, and must omit it when unset.",
                    )
                continue
            set_key(result, key, sanitize_value(key, value))
        return result

    with transaction.atomic(durable=True):
        return envelope_write(
            scope_id=scope_id,
            session_id=session_id,
            if_match=if_match,
            change=replace,
            writer=Writer(Owner.HOST, WriteOperation.REPLACE, principal, request_id),
        )


def envelope_overlay(
    *,
    scope_id: str,
    session_id: str,
    patch: Mapping[str, Any],
    if_match: IfMatch | None,
    principal: Principal,
    request_id: str,
) -> EnvelopeWritten:
    """The worker's overlay: set the worker-owned keys ``patch`` names.

    ``null`` or ``""`` clears a key; every key not named is carried forward.
    Creates the envelope when missing. Raises ``ScopeNotFound``,
    ``PreconditionFailed``, ``UnknownMetaKey``, ``NotWorkerKey``,
    ``InvalidMetaValue``, ``WorkingNotesTooLarge``, ``MetaTooLarge``. Takes the
    envelope row lock in one durable transaction.
    """

    def overlay(current: Meta) -> Meta:
        result = dict(current)
        for key, value in patch.items():
            if known_owner(key) is Owner.HOST:
                raise NotWorkerKey(
                    key,
                    "host_owned",
                    f"meta.{key} is host-owned: a PATCH names worker-owned keys only.",
                )
            set_key(result, key, sanitize_value(key, value))
        return result

    with transaction.atomic(durable=True):
        return envelope_write(
            scope_id=scope_id,
            session_id=session_id,
            if_match=if_match,
            change=overlay,
            writer=Writer(Owner.WORKER, WriteOperation.OVERLAY, principal, request_id),
        )
