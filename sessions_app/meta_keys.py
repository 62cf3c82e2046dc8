"""The envelope's reserved-key table, as data (docs/sessions-meta.md).

Each reserved key's type, cap (UTF-8 bytes, read from a setting at call time) and
owner. Keys outside the table are unknown unless they start with ``x-``
(host-defined, any scalar, host-owned). The sanitizer that applies these rules is
``meta.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Final

from django.conf import settings

from .exceptions import UnknownMetaKey

HOST_DEFINED_PREFIX: Final = "x-"
WORKING_NOTES_KEY: Final = "workingNotes"


class Owner(StrEnum):
    """Which side may write a key: the host's PUT or the worker's PATCH."""

    HOST = "host"
    WORKER = "worker"


class ValueKind(StrEnum):
    STRING = "string"
    CHOICE = "one of"
    NON_NEGATIVE_INTEGER = "integer >= 0"
    JSON_STRING_ARRAY = "string holding a JSON array of strings"
    JSON_OBJECT = "string holding a JSON object"
    NOTES = "string (trimmed)"


JSON_TEXT_KINDS = (ValueKind.JSON_STRING_ARRAY, ValueKind.JSON_OBJECT)


@dataclass(frozen=True)
class KeyRule:
    """One row of the reserved-key table."""

    key: str
    owner: Owner
    kind: ValueKind
    cap_setting: str | None = None
    choices: tuple[str, ...] = ()

    def max_bytes(self) -> int | None:
        """The cap in UTF-8 bytes, read from its setting now (None: no byte cap)."""
        if self.cap_setting is None:
            return None
        cap: int = getattr(settings, self.cap_setting)
        return cap

    def describe(self) -> str:
        """The rule in words, for error messages."""
        if self.kind is ValueKind.CHOICE:
            return "one of " + ", ".join(self.choices)
        if self.kind is ValueKind.NON_NEGATIVE_INTEGER:
            return "an integer >= 0"
        return f"a {self.kind.value} of at most {self.max_bytes()} UTF-8 bytes"


def _reserved_key_table() -> Mapping[str, KeyRule]:
    host, worker = Owner.HOST, Owner.WORKER
    text, notes = ValueKind.STRING, ValueKind.NOTES
    rules = (
        KeyRule("personaId", host, text, "PERSONA_ID_MAX_BYTES"),
        KeyRule("personaSnapshot", host, text, "PERSONA_SNAPSHOT_MAX_BYTES"),
        KeyRule("selectedModel", host, text, "SELECTED_MODEL_MAX_BYTES"),
        KeyRule(
            "reasoningEffort",
            host,
            ValueKind.CHOICE,
            choices=("low", "medium", "high"),
        ),
        KeyRule(
            "attachedSkills",
            host,
            ValueKind.JSON_STRING_ARRAY,
            "ATTACHED_SKILLS_MAX_BYTES",
        ),
        KeyRule("cwd", worker, text, "CWD_MAX_BYTES"),
        KeyRule("activeSandboxId", worker, text, "ACTIVE_SANDBOX_ID_MAX_BYTES"),
        KeyRule("turnRunId", worker, text, "TURN_RUN_ID_MAX_BYTES"),
        KeyRule(
            "turnStatus",
            worker,
            ValueKind.CHOICE,
            choices=("idle", "running", "completed", "cancelled", "failed"),
        ),
        KeyRule("turnCursor", worker, ValueKind.NON_NEGATIVE_INTEGER),
        KeyRule("usage", worker, ValueKind.JSON_OBJECT, "USAGE_MAX_BYTES"),
        KeyRule("statusSlot", worker, text, "STATUS_SLOT_MAX_BYTES"),
        KeyRule(
            "modelMessagesPointer", worker, text, "MODEL_MESSAGES_POINTER_MAX_BYTES"
        ),
        KeyRule(WORKING_NOTES_KEY, worker, notes, "WORKING_NOTES_MAX_BYTES"),
    )
    return MappingProxyType({rule.key: rule for rule in rules})


RESERVED_KEYS: Final[Mapping[str, KeyRule]] = _reserved_key_table()


def owner_of(key: str) -> Owner | None:
    """The owner of ``key``; ``None`` for a key that is neither reserved nor ``x-``."""
    rule = RESERVED_KEYS.get(key)
    if rule is not None:
        return rule.owner
    if key.startswith(HOST_DEFINED_PREFIX):
        return Owner.HOST
    return None


def known_owner(key: str) -> Owner:
    """The owner of ``key``; raises ``UnknownMetaKey`` for a key the rules do not
    know (neither reserved nor ``x-``)."""
    owner = owner_of(key)
    if owner is None:
        raise UnknownMetaKey(
            key,
            "unknown_meta_key",
            f"meta.{key} is not a reserved key and does not start with "
            f"{HOST_DEFINED_PREFIX!r}.",
        )
    return owner
