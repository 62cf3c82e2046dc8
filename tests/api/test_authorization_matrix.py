"""The authorization matrix (spec/limits.md 6), generated from the URL configuration.

Every route x method the URLconf serves must have a row in ``MATRIX``: the role it
needs (``viewer``, ``contributor``, ``admin`` on the scope it names; ``everywhere``
for a ``*`` grant of contributor or more; ``star`` for a ``*`` grant of any role;
``any`` for any valid token; ``public``
for no token at all) and a request that succeeds when allowed. For a declared
operation (``<app>/operations.py``) the role is read from its declaration
(``Operation.access.needs``, through the view the URL conf routes to), never
written here a second time (``DECLARED``). A new route without
a row fails ``test_every_route_has_a_row``. Each row is then sent by every kind of
caller - no token, an unknown, revoked or expired token, viewer / contributor /
admin on the scope, admin on another scope only, and ``*`` grants of each role -
and must answer 401, 403 or its success status exactly as the role rules say.

The admin (session authentication, tested in tests/api/test_token_admin.py and
the apps' admin tests) and the catch-all 404 route are not API routes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone

from powercontext.access.models import ApiToken
from powercontext.access.tokens import token_create, token_revoke
from powercontext.principals import ROLE_RANK, Role
from tests.conftest import ApiClient, create_scope
from tests.handoffs import helpers as handoff

pytestmark = pytest.mark.django_db

METHODS = ("get", "post", "put", "patch", "delete")


@dataclass(frozen=True)
class World:
    """A scope with one of everything, and another scope."""

    scope: str
    other: str
    handoff_content: dict[str, Any] = field(default_factory=dict)
    token_id: int = 0  # a token with a grant on ``scope`` only
    hold_id: str = ""


# The role of a declared operation: its declaration's (``_declared``).
DECLARED = "declared"


@dataclass(frozen=True)
class Row:
    # public | any | star | everywhere | viewer | contributor | admin, or DECLARED
    needs: str
    path: Callable[[World], str]
    body: Callable[[World], Any] = lambda world: None
    success: tuple[int, ...] = (200,)
    # A token route answers a token the caller may not see as missing (404),
    # so token ids cannot be probed.
    refused: int = 403


def _scope(suffix: str) -> Callable[[World], str]:
    return lambda world: f"/v1/scopes/{world.scope}{suffix}"


def _envelope(world: World) -> dict[str, Any]:
    return {"meta": {"x-colour": "blue"}}


def _draft(world: World) -> dict[str, Any]:
    return {"scope_id": world.scope, "draft": handoff.draft([handoff.sc("c-1")])}


def _commit(world: World) -> dict[str, Any]:
    """The head's content again: an idempotent commit that always succeeds."""
    return {
        "scope_id": world.scope,
        "handoff": {
            "generation": None,
            "schema": "powercontext.prepared-handoff.v1",
            "scope_id": world.scope,
            "base": handoff.href(1),
            "content": world.handoff_content,
        },
    }


def _token(suffix: str = "") -> Callable[[World], str]:
    return lambda world: f"/v1/tokens/{world.token_id}{suffix}"


def _in_a_day(world: World) -> dict[str, Any]:
    return {"expires_at": (timezone.now() + timedelta(days=1)).isoformat()}


def _memory_scope(world: World) -> dict[str, Any]:
    return {"scope_id": world.scope}


def _generation(**extra: Any) -> Callable[[World], dict[str, Any]]:
    return lambda world: {"scope_id": world.scope, "objective": "o", **extra}


MATRIX: dict[tuple[str, str], Row] = {
    ("health-live", "get"): Row("public", lambda world: "/health/live"),
    ("health-ready", "get"): Row("public", lambda world: "/health/ready"),
    ("openapi", "get"): Row("public", lambda world: "/openapi.json"),
    ("metrics", "get"): Row("star", lambda world: "/metrics"),
    ("docs", "get"): Row("public", lambda world: "/docs"),
    ("scope-collection", "get"): Row(DECLARED, lambda world: "/v1/scopes"),
    ("scope-collection", "post"): Row(
        DECLARED,
        lambda world: "/v1/scopes",
        lambda world: {"title": "t", "summary": "s", "idempotency_key": "matrix"},
        (201,),
    ),
    ("scope-detail", "get"): Row(DECLARED, _scope("")),
    # The first call of each principal creates its default scope.
    ("scope-default", "get"): Row(DECLARED, lambda world: "/v1/scopes/default"),
    ("capture-content", "post"): Row(
        DECLARED,
        lambda world: "/v1/sources/content",
        lambda world: {"scope_id": world.scope, "source_id": "m-1", "content": "m"},
        (202,),
    ),
    ("capture-working-note", "post"): Row(
        DECLARED,
        lambda world: "/v1/sources/working-notes",
        lambda world: {
            "scope_id": world.scope,
            "source_id": "m-n",
            "content": "m",
            "session_id": "sess-1",
            "note_kind": "inspection",
        },
        (202,),
    ),
    ("source-collection", "get"): Row(DECLARED, _scope("/sources")),
    ("source-collection", "post"): Row(
        DECLARED, _scope("/sources"), lambda world: {"content": "x"}, (201,)
    ),
    ("source-window", "get"): Row(DECLARED, _scope("/sources/window")),
    ("source-audit-collection", "get"): Row(DECLARED, _scope("/source-audit")),
    ("source-audit-detail", "get"): Row(DECLARED, _scope("/source-audit/content/c-1")),
    ("source-attempts", "get"): Row(DECLARED, _scope("/source-attempts/content/c-1")),
    ("source-detail", "get"): Row(DECLARED, _scope("/sources/content/c-1")),
    ("session-envelope", "get"): Row(DECLARED, _scope("/sessions/sess-1/envelope")),
    ("session-envelope", "put"): Row(
        DECLARED, _scope("/sessions/sess-1/envelope"), _envelope, (200,)
    ),
    ("session-envelope", "patch"): Row(
        DECLARED,
        _scope("/sessions/sess-1/envelope"),
        lambda world: {"meta": {"turnStatus": "idle"}},
        (200,),
    ),
    ("session-working-notes", "get"): Row(
        DECLARED, _scope("/sessions/sess-1/working-notes")
    ),
    ("session-working-notes", "put"): Row(
        DECLARED,
        _scope("/sessions/sess-1/working-notes"),
        lambda world: {"notes": "the notes"},
        (200,),
    ),
    ("session-working-notes", "delete"): Row(
        DECLARED, _scope("/sessions/sess-2/working-notes")
    ),
    ("session-working-notes-fold", "get"): Row(
        DECLARED, _scope("/sessions/sess-1/working-notes/fold")
    ),
    ("evidence-resolve", "post"): Row(
        DECLARED,
        _scope("/evidence/resolve"),
        lambda world: {
            "purpose": "handoff",
            "refs": [{"name": "content", "source_id": "c-1"}],
        },
    ),
    ("handoff-finalize", "post"): Row(DECLARED, lambda world: handoff.FINALIZE, _draft),
    ("handoff-commit", "post"): Row(DECLARED, lambda world: handoff.COMMIT, _commit),
    ("handoff-continue", "post"): Row(
        DECLARED,
        lambda world: handoff.CONTINUE,
        lambda world: {"scope_id": world.scope, "selection": "latest"},
    ),
    ("handoff-hint", "post"): Row(
        DECLARED,
        lambda world: handoff.HINT,
        lambda world: {"scope_id": world.scope, "selection": "latest"},
    ),
    ("handoff-prepare", "post"): Row(
        DECLARED,
        lambda world: handoff.PREPARE,
        _generation(evidence=[handoff.sc("c-1")]),
        (503,),
    ),
    ("token-collection", "get"): Row(DECLARED, lambda world: "/v1/tokens"),
    ("token-collection", "post"): Row(
        DECLARED,
        lambda world: "/v1/tokens",
        lambda world: {
            "name": "minted",
            "grants": [{"scope": world.scope, "role": "viewer"}],
        },
        (201,),
    ),
    ("token-detail", "get"): Row(DECLARED, _token(), refused=404),
    ("token-detail", "patch"): Row(DECLARED, _token(), _in_a_day, refused=404),
    ("token-revoke", "post"): Row(DECLARED, _token("/revoke"), refused=404),
    ("token-rotate", "post"): Row(
        DECLARED,
        _token("/rotate"),
        lambda world: {"grace_seconds": 0},
        (201,),
        refused=404,
    ),
    ("token-grants", "post"): Row(
        DECLARED,
        _token("/grants"),
        lambda world: {"scope": world.scope, "role": "admin"},
        refused=404,
    ),
    ("token-grant-detail", "delete"): Row(
        DECLARED,
        lambda world: f"/v1/tokens/{world.token_id}/grants/{world.scope}",
        refused=404,
    ),
    # The legacy Memory routes: remember, search, the entry list and the read by
    # target are served; the others refuse every valid request (422): those the
    # reference refuses without a scope lookup need any token, the others a grant
    # on the scope.
    ("memory-remember", "post"): Row(
        DECLARED,
        lambda world: "/v1/memory/remember",
        lambda world: {"scope_id": world.scope, "kind": "k", "text": "t"},
        (200,),
    ),
    ("memory-search", "post"): Row(
        DECLARED,
        lambda world: "/v1/memory/search",
        lambda world: {"scope_id": world.scope, "query": "q"},
        (200,),
    ),
    ("memory-flush", "post"): Row(
        DECLARED, lambda world: "/v1/memory/flush", _memory_scope, (422,)
    ),
    ("memory-capacity", "post"): Row(
        DECLARED, lambda world: "/v1/memory/capacity", _memory_scope, (422,)
    ),
    ("memory-entries-list", "post"): Row(
        DECLARED, lambda world: "/v1/memory/entries/list", _memory_scope, (200,)
    ),
    ("memory-entries-get", "post"): Row(
        DECLARED,
        lambda world: "/v1/memory/entries/get",
        lambda world: {"scope_id": world.scope, "citation": {}},
        (422,),
    ),
    ("memory-entries-revise", "post"): Row(
        DECLARED,
        lambda world: "/v1/memory/entries/revise",
        lambda world: {
            "scope_id": world.scope,
            "citation": {},
            "kind": "k",
            "text": "t",
        },
        (422,),
    ),
    ("memory-entries-retire", "post"): Row(
        DECLARED,
        lambda world: "/v1/memory/entries/retire",
        lambda world: {"scope_id": world.scope, "citation": {}},
        (422,),
    ),
    ("memory-changes", "post"): Row(
        DECLARED, lambda world: "/v1/memory/changes", _memory_scope, (422,)
    ),
    # Any valid token may talk MCP; each tool call is then authorized as its
    # operation (tests/mcp/).
    ("mcp", "post"): Row(
        "any",
        lambda world: "/mcp",
        lambda world: {"jsonrpc": "2.0", "id": 1, "method": "ping"},
    ),
    ("session-close", "post"): Row(
        DECLARED, _scope("/sessions/sess-3/close"), lambda world: {}, (200, 201)
    ),
    ("legal-hold-collection", "get"): Row(DECLARED, _scope("/legal-holds")),
    ("legal-hold-collection", "post"): Row(
        DECLARED, _scope("/legal-holds"), lambda world: {"reason": "r"}, (201,)
    ),
    ("legal-hold-release", "post"): Row(
        DECLARED,
        lambda world: f"/v1/scopes/{world.scope}/legal-holds/{world.hold_id}/release",
        lambda world: {"reason": "r"},
    ),
    ("scope-purge", "post"): Row(
        DECLARED,
        _scope("/purge"),
        lambda world: {"older_than_seconds": 0, "dry_run": True},
    ),
    ("scope-export", "get"): Row(DECLARED, _scope("/export")),
    ("source-redact", "get"): Row(DECLARED, _scope("/sources/content/c-2/redact")),
    ("source-redact", "post"): Row(
        DECLARED, _scope("/sources/content/c-2/redact"), lambda world: {"reason": "r"}
    ),
    ("source-search", "get"): Row(DECLARED, _scope("/search?q=content")),
    ("envelope-search", "get"): Row(DECLARED, _scope("/search/envelopes?q=notes")),
    ("scope-redactions", "post"): Row(
        DECLARED,
        _scope("/redactions"),
        lambda world: {"q": "no such text", "reason": "r", "dry_run": True},
    ),
    ("handoff-activate", "post"): Row(
        DECLARED,
        lambda world: handoff.ACTIVATE,
        _generation(boundary_source={"name": "content", "source_id": "c-1"}),
        (503,),
    ),
}


def _routes() -> set[tuple[str, str]]:
    """(route name, method) of every view the URLconf serves, admin excepted."""
    found: set[tuple[str, str]] = set()
    pending: list[Any] = list(get_resolver().url_patterns)
    while pending:
        entry = pending.pop()
        if isinstance(entry, URLResolver):
            if entry.namespace != "admin":
                pending.extend(entry.url_patterns)
            continue
        assert isinstance(entry, URLPattern)
        view_class = getattr(entry.callback, "view_class", None)
        if view_class is None:  # the catch-all 404 function
            continue
        found.update(
            (entry.name, method) for method in METHODS if hasattr(view_class, method)
        )
    return found


def _declared() -> dict[tuple[str, str], str]:
    """(route name, method) -> the role its operation's declaration needs."""
    found: dict[tuple[str, str], str] = {}
    pending: list[Any] = list(get_resolver().url_patterns)
    while pending:
        entry = pending.pop()
        if isinstance(entry, URLResolver):
            pending.extend(entry.url_patterns)
            continue
        view_class = getattr(entry.callback, "view_class", None)
        for method, operation in getattr(view_class, "operations", {}).items():
            found[(entry.name, method)] = operation.access.needs
    return found


DECLARED_NEEDS = _declared()


def _needs(route: str, method: str) -> str:
    row = MATRIX[(route, method)]
    return DECLARED_NEEDS[(route, method)] if row.needs == DECLARED else row.needs


def test_declared_operations_take_their_role_from_the_declaration() -> None:
    declared_rows = {key for key, row in MATRIX.items() if row.needs == DECLARED}

    assert declared_rows == DECLARED_NEEDS.keys()


def test_every_route_has_a_row() -> None:
    routes = _routes()

    assert routes - MATRIX.keys() == set(), "routes without a row in MATRIX"
    assert MATRIX.keys() - routes == set(), "rows for routes that do not exist"


# --- Callers --------------------------------------------------------------------------

CALLERS = [
    "no-token",
    "unknown",
    "revoked",
    "expired",
    "viewer",
    "contributor",
    "admin",
    "admin-elsewhere",
    "*:viewer",
    "*:contributor",
    "*:admin",
]


def _grants(caller: str, world: World) -> list[tuple[str, Role]]:
    if caller.startswith("*:"):
        return [("*", Role(caller[2:]))]
    if caller == "admin-elsewhere":
        return [(world.other, Role.ADMIN)]
    return [(world.scope, Role(caller))]


def _client(caller: str, world: World) -> ApiClient:
    if caller == "no-token":
        return ApiClient()
    if caller == "unknown":
        return ApiClient("pct_" + "x" * 43)
    if caller in ("revoked", "expired"):
        token, raw = token_create(principal=caller, grants=[("*", Role.ADMIN)])
        if caller == "revoked":
            token_revoke(prefix=token.prefix)
        else:
            ApiToken.objects.filter(pk=token.pk).update(
                expires_at=timezone.now() - timedelta(seconds=1)
            )
        return ApiClient(raw)
    return ApiClient(token_create(principal=caller, grants=_grants(caller, world))[1])


def _expected(row: Row, needs: str, caller: str) -> tuple[int, ...]:
    """401, 403 (or the row's refusal) or its success, by the role rules of api.md 3."""
    if needs == "public":
        return row.success
    if caller in ("no-token", "unknown", "revoked", "expired"):
        return (401,)
    if needs == "any":
        return row.success
    role = Role(caller[2:]) if caller.startswith("*:") else None
    if needs == "star":
        allowed = role is not None
    elif needs == "everywhere":
        allowed = role is not None and ROLE_RANK[role] >= ROLE_RANK[Role.CONTRIBUTOR]
    else:
        needed = ROLE_RANK[Role(needs)]
        held = role or (None if caller == "admin-elsewhere" else Role(caller))
        allowed = held is not None and ROLE_RANK[held] >= needed
    return row.success if allowed else (row.refused,)


@pytest.fixture
def world(api: ApiClient) -> World:
    scope = create_scope(api, key="matrix-world")
    other = create_scope(api, key="matrix-other")
    handoff.capture(api, scope, "c-1")
    api.put(f"/v1/scopes/{scope}/sessions/sess-1/working-notes", {"notes": "n"})
    committed = handoff.committed(api, scope, handoff.draft([handoff.sc("c-1")]))
    handoff.capture(api, scope, "c-2")
    handoff.capture(api, scope, "c-2/redact")
    held = api.post(f"/v1/scopes/{scope}/legal-holds", {"reason": "matrix"})
    released = api.post(
        f"/v1/scopes/{scope}/legal-holds/{held.json()['hold_id']}/release",
        {"reason": "so it blocks nothing"},
    )
    assert released.status_code == 200
    # Minted by the scope admin for its own principal, as the API names it
    # (decision 0031): it may then rotate it too.
    target, _ = token_create(
        principal="admin/target", owner="admin", grants=[(scope, Role.CONTRIBUTOR)]
    )
    return World(scope, other, committed["content"], target.pk, held.json()["hold_id"])


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize(("route", "method"), sorted(MATRIX))
def test_the_matrix(world: World, route: str, method: str, caller: str) -> None:
    row = MATRIX[(route, method)]
    client = _client(caller, world)

    response = client.request(method.upper(), row.path(world), row.body(world))

    expected = _expected(row, _needs(route, method), caller)
    assert response.status_code in expected, response.content[:300]
