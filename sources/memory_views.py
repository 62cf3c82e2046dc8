"""Views of the legacy Memory routes (``sources.memory``): validate, authorize, refuse.

Each route validates its body with the reference's request model (so a malformed
request gets the reference's error items), then refuses it. Routes whose refusal
the reference gives without looking at the scope need only a valid token; the
others are authorized on the scope they name, as every scoped operation is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework.request import Request
from rest_framework.views import APIView

from powercontext.api.openapi import documented
from powercontext.api.permissions import authorize, principal_of
from powercontext.api.requests import parse_body
from powercontext.api.schema import ErrorResponseSerializer
from powercontext.inputs import StrictInput
from powercontext.principals import Role

from . import inputs, memory

MEMORY = ["memory"]
REFUSED = OpenApiResponse(
    ErrorResponseSerializer,
    description=(
        "Always, after the checks above: `legacy_memory_operation_unsupported` for "
        "the operations the reference refuses, `operation_not_supported` for the "
        "Memory features this service does not have."
    ),
)

# How an operation's valid request is refused: (legacy refusal or None, whether the
# scope is looked up first).
Refusal = Callable[[Any], tuple[memory.LegacyOperation | None, bool]]


def _memory_view(
    operation_id: str, model: type[StrictInput], role: Role | None, refusal: Refusal
) -> type[APIView]:
    class MemoryView(APIView):
        @documented(
            operation_id,
            tags=MEMORY,
            body=model,
            answers={422: REFUSED},
            errors=(404,) if role is not None else (),
        )
        def post(self, request: Request) -> None:
            data = parse_body(model, request)
            legacy, scoped = refusal(data)
            if role is not None:
                authorize(principal_of(request), data.scope_id, role)  # type: ignore[attr-defined]
            memory.memory_operation_refuse(
                operation=operation_id,
                scope_id=data.scope_id if scoped else None,  # type: ignore[attr-defined]
                legacy=legacy,
            )

    MemoryView.__name__ = MemoryView.__qualname__ = (
        "".join(part.title() for part in operation_id.split("_")) + "View"
    )
    return MemoryView


def _always(legacy: memory.LegacyOperation) -> Refusal:
    return lambda data: (legacy, False)


def _unsupported(data: Any) -> tuple[None, bool]:
    return None, True


def _remember(
    data: inputs.RememberMemory,
) -> tuple[memory.LegacyOperation | None, bool]:
    legacy = None if data.expected_revision is None else memory.REVISION_PRECONDITION
    return legacy, True


def _entry_get(
    data: inputs.GetMemoryEntry,
) -> tuple[memory.LegacyOperation | None, bool]:
    return (memory.CITATION_READ if data.citation is not None else None), True


# (route, operation id, model, role on the named scope or None, refusal)
ROUTES: list[tuple[str, str, type[StrictInput], Role | None, Refusal]] = [
    ("remember", "remember_memory", inputs.RememberMemory, Role.CONTRIBUTOR, _remember),
    ("search", "search_memory", inputs.SearchMemory, Role.VIEWER, _unsupported),
    ("flush", "flush_memory", inputs.MemoryScope, Role.CONTRIBUTOR, _unsupported),
    (
        "capacity",
        "get_memory_capacity",
        inputs.MemoryScope,
        None,
        _always(memory.CAPACITY),
    ),
    (
        "entries/list",
        "list_memory_entries",
        inputs.ListMemoryEntries,
        Role.VIEWER,
        _unsupported,
    ),
    ("entries/get", "get_memory_entry", inputs.GetMemoryEntry, Role.VIEWER, _entry_get),
    (
        "entries/revise",
        "revise_memory_entry",
        inputs.ReviseMemoryEntry,
        None,
        _always(memory.CITATION_REVISE),
    ),
    (
        "entries/retire",
        "retire_memory_entry",
        inputs.RetireMemoryEntry,
        None,
        _always(memory.CITATION_RETIRE),
    ),
    (
        "changes",
        "list_memory_changes",
        inputs.ListMemoryChanges,
        None,
        _always(memory.CHANGES),
    ),
]
# (path under /v1/memory/, route name suffix, view)
ROUTE_VIEWS = [
    (route, route.replace("/", "-"), _memory_view(operation_id, model, role, refusal))
    for route, operation_id, model, role, refusal in ROUTES
]
