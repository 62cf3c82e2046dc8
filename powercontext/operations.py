"""Operations: each HTTP operation, and the MCP tool it may also be, declared once.

An ``Operation`` says everything about one operation: its id, HTTP method and
route, its input models (path, query, body), where its scope comes from and the
role it needs (``Access``), the one service or selector it calls, how its result
is rendered (the body, the success status, response headers), what the OpenAPI
document says about it, and optionally its MCP tool. Each app declares its
operations in ``<app>/operations.py``; everything else is derived:

- the DRF view and the URL pattern (``powercontext.api.operations``),
- the OpenAPI entry (drf-spectacular's ``extend_schema``, from the same models),
- the MCP tool (``powercontext.mcp_server``), which calls the operation directly,
- the row of the authorization matrix (tests/api/test_authorization_matrix.py).

This module is the kernel's: it knows no HTTP framework. The call receives the
validated inputs (``Given``) and a ``Context`` (the principal, the request id, the
conditional headers, the position of a list walk, and the grant checks the
transport supplies), and returns a domain value that ``render`` turns into the
wire shape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel

from .inputs import StrictInput
from .pages import Position
from .principals import Principal, Role

HttpMethod = Literal["GET", "POST", "PUT", "PATCH", "DELETE"]


# --- Where it is routed ---------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    """A URL pattern under ``/v1/`` and its name; operations on one path share it.

    ``regex`` patterns are ``re_path`` patterns, the others ``path`` patterns (their
    converters registered by the app's ``urls.py``).
    """

    name: str
    pattern: str
    regex: bool = False


# --- Who may call it ------------------------------------------------------------------

Needs = Literal["any", "everywhere", "viewer", "contributor", "admin"]


@dataclass(frozen=True)
class Access:
    """The grant an operation needs, and who checks it.

    ``needs`` is what the authorization matrix reads: ``any`` valid token,
    ``everywhere`` (a ``*`` grant of ``role`` or more), or a role on the scope.
    With ``scope_from`` (``path`` or ``body``: the ``scope_id`` of that model) the
    transport authorizes after validating the inputs and before the call;
    ``everywhere`` likewise. Otherwise the call decides, through the context
    (``Context.authorize`` or the access rules of its service).
    """

    needs: Needs
    role: Role | None = None
    scope_from: Literal["path", "body"] | None = None
    checked_by_call: bool = False


ANY_TOKEN = Access("any")


def on_scope(role: Role, *, scope_from: Literal["path", "body"] = "path") -> Access:
    """``role`` or more on the scope named by the path's or the body's ``scope_id``."""
    return Access(role.value, role, scope_from)


def everywhere(role: Role) -> Access:
    """A ``*`` grant of ``role`` or more (creating scopes)."""
    return Access("everywhere", role)


def decided_by_call(needs: Needs) -> Access:
    """The call checks the grants itself (tokens, the default scope)."""
    return Access(needs, checked_by_call=True)


class Grants(Protocol):
    """The grant checks a transport supplies (``powercontext.api.permissions``)."""

    def authorize(self, principal: Principal, scope_id: str, role: Role) -> None: ...

    def authorize_everywhere(self, principal: Principal, role: Role) -> None: ...

    def current(self, principal: Principal) -> Principal: ...


# --- What the call receives -----------------------------------------------------------


@dataclass(frozen=True)
class Given:
    """The validated inputs: the path, query and body models (None when absent)."""

    path: Any = None
    query: Any = None
    body: Any = None


@dataclass(frozen=True)
class Context:
    """Who calls, and what of the request an operation may need besides its inputs.

    ``if_match`` and ``if_none_match`` are the raw headers (absent over MCP);
    ``position`` is where a list walk resumes (from the cursor, for a listing).
    """

    principal: Principal
    request_id: str
    grants: Grants
    if_match: str | None = None
    if_none_match: str | None = None
    position: Position | None = None

    def authorize(self, scope_id: str, role: Role) -> None:
        self.grants.authorize(self.principal, scope_id, role)

    def authorize_everywhere(self, role: Role) -> None:
        self.grants.authorize_everywhere(self.principal, role)

    def current_principal(self) -> Principal:
        """The principal with its grants read now (lists of what grants reach)."""
        return self.grants.current(self.principal)


# --- What it answers ------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    """A ``text/plain`` answer."""

    text: str


@dataclass(frozen=True)
class Streamed:
    """``{"items": [...], <tail>}``: items rendered one by one, ``tail()`` last."""

    items: Iterable[Any]
    render: Callable[[Any], Any]
    tail: Callable[[], dict[str, Any]]


@dataclass(frozen=True)
class Listing:
    """A cursor-paged list: the call returns a ``Page``, ``render`` renders one row.

    ``kind`` and ``bound_to(given)`` bind the list's cursors (a cursor of another
    list, scope or filter set is refused); ``cursor`` names the query field that
    carries it. ``stream`` writes the page item by item (stored content).
    """

    kind: str
    bound_to: Callable[[Given], tuple[Any, ...]]
    stream: bool = False
    cursor: str = "cursor"


@dataclass(frozen=True)
class Described:
    """An OpenAPI answer without a model of its own: a description, and whether its
    body is the error envelope."""

    description: str
    error: bool = False


@dataclass(frozen=True)
class Header:
    """A documented header: of the request, or of the answers with ``response``."""

    name: str
    description: str
    response: tuple[int, ...] = ()


@dataclass(frozen=True)
class ToolHints:
    """MCP tool annotations (``readOnlyHint`` and the others)."""

    read_only: bool
    destructive: bool
    idempotent: bool


# Hints for a tool that only reads (as the reference marks its reads).
READ_ONLY = ToolHints(read_only=True, destructive=False, idempotent=True)


def writes(*, destructive: bool, idempotent: bool) -> ToolHints:
    """Hints for a tool that changes something inside this service."""
    return ToolHints(read_only=False, destructive=destructive, idempotent=idempotent)


@dataclass(frozen=True)
class ToolSpec:
    """The operation as an MCP tool: its name, a description written for an agent,
    and its hints (None: none given)."""

    name: str
    description: str
    hints: ToolHints | None = None


def no_headers(result: Any) -> Mapping[str, str]:
    return {}


@dataclass(frozen=True)
class Operation:
    """One operation, declared once (see the module docstring).

    ``call(given, context)`` is the one service or selector, adapted to the
    validated inputs; ``render(result)`` gives the wire body (a JSON value, a
    ``Text``, a ``Streamed``, or None for no body; for a ``listing`` it renders
    one row). ``status`` and ``headers`` may depend on the result (201 on create,
    ``ETag``, ``Location``). ``path_from`` rewrites the route's captured values
    before validation (a route whose suffix belongs to an identity).
    """

    operation_id: str
    method: HttpMethod
    route: Route
    access: Access
    call: Callable[[Given, Context], Any]
    render: Callable[[Any], Any]
    tags: tuple[str, ...]
    path: type[StrictInput] | None = None
    query: type[StrictInput] | None = None
    body: type[StrictInput] | None = None
    status: int | Callable[[Any], int] = 200
    headers: Callable[[Any], Mapping[str, str]] = no_headers
    listing: Listing | None = None
    answers: Mapping[Any, Any] = field(default_factory=dict)
    errors: tuple[int, ...] = ()
    documented_headers: tuple[Header, ...] = ()
    description: str | None = None
    query_invalid_status: int = 422
    replica: bool = False
    documented: bool = True
    path_from: Callable[[dict[str, str]], dict[str, str]] | None = None
    tool: ToolSpec | None = None

    @property
    def reads(self) -> bool:
        """Counted as a read by the rate limits (a write otherwise)."""
        return self.method == "GET"

    def status_of(self, result: Any) -> int:
        return self.status(result) if callable(self.status) else self.status

    def answer_model(self) -> type[BaseModel] | None:
        """The pydantic model of the JSON success answer, if it has one."""
        for status, answer in self.answers.items():
            success = isinstance(status, int) and 200 <= status < 300
            if success and isinstance(answer, type) and issubclass(answer, BaseModel):
                return answer
        return None
