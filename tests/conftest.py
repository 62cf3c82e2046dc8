"""Shared fixtures: an HTTP client speaking the API, tokens, scopes, statement budgets.

Tests run on whatever ``DATABASE_URL`` names (``make test`` runs PostgreSQL and
SQLite). A PostgreSQL URL that cannot be reached stops the run with instructions
instead of skipping anything.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import connection
from django.http import HttpResponse
from django.test import Client
from django.test.utils import CaptureQueriesContext

from powercontext.access.tokens import token_create
from powercontext.principals import Role

# Processes the tests start (manage.py, the server) read no env file unless a test
# names one: a developer's .env must not reach them.
os.environ["POWERCONTEXT_ENV_FILE"] = ""

TRANSACTION_CONTROL = re.compile(
    r"^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b", re.IGNORECASE
)


def pytest_configure(config: pytest.Config) -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        return
    import psycopg

    try:
        psycopg.connect(url, connect_timeout=5).close()
    except psycopg.Error as exc:
        pytest.exit(
            f"PostgreSQL is not reachable at DATABASE_URL={url}: {exc}\n"
            "Start PostgreSQL or point DATABASE_URL at one, e.g.\n"
            "  DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/postgres make test",
            returncode=3,
        )


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Tests marked ``postgres`` cannot run on SQLite: fail loudly if selected there.
    Tests marked ``sqlite`` show SQLite's form of a statement: skipped on PostgreSQL
    (the SQLite run, ``make test-sqlite``, runs them)."""
    if connection.vendor == "postgresql":
        skip = pytest.mark.skip(reason="shows the SQLite form; make test-sqlite")
        for item in items:
            if item.get_closest_marker("sqlite"):
                item.add_marker(skip)
        return
    selected = [item for item in items if item.get_closest_marker("postgres")]
    if selected and not config.getoption("-m"):
        raise pytest.UsageError(
            f"{len(selected)} tests need PostgreSQL; run them with a PostgreSQL "
            "DATABASE_URL or deselect them with -m 'not postgres'."
        )


def _materialized(response: Any) -> Any:
    """A streamed answer read whole, so tests use ``.content`` and ``.json()``."""
    if not getattr(response, "streaming", False):
        return response
    body = b"".join(response.streaming_content)
    whole = HttpResponse(body, status=response.status_code)
    for name, value in response.items():
        whole[name] = value
    whole.json = lambda: json.loads(body)  # type: ignore[attr-defined]
    whole.streamed = True  # type: ignore[attr-defined]
    return whole


class ApiClient:
    """Django's test client with a bearer token and JSON bodies (full middleware)."""

    def __init__(self, token: str | None = None) -> None:
        self.client = Client()
        self.token = token

    def _headers(self, headers: dict[str, str] | None) -> dict[str, str]:
        merged = dict(headers or {})
        if self.token is not None:
            merged.setdefault("Authorization", f"Bearer {self.token}")
        return merged

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        raw: bytes | str | None = None,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
        query: dict[str, Any] | None = None,
    ) -> Any:
        data: bytes | str | None = raw
        if raw is None and body is not None:
            data = json.dumps(body)
        kwargs: dict[str, Any] = {"headers": self._headers(headers)}
        if data is not None:
            kwargs.update(data=data, content_type=content_type)
        call = getattr(self.client, method.lower())
        if query is not None:
            return _materialized(call(path, query, **kwargs))
        return _materialized(call(path, **kwargs))

    def get(self, path: str, **kwargs: Any) -> Any:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, body: Any = None, **kwargs: Any) -> Any:
        return self.request("POST", path, body, **kwargs)

    def put(self, path: str, body: Any = None, **kwargs: Any) -> Any:
        return self.request("PUT", path, body, **kwargs)

    def patch(self, path: str, body: Any = None, **kwargs: Any) -> Any:
        return self.request("PATCH", path, body, **kwargs)

    def delete(self, path: str, body: Any = None, **kwargs: Any) -> Any:
        return self.request("DELETE", path, body, **kwargs)


@pytest.fixture
def make_token(db: None) -> Callable[..., str]:
    """Mint a token: ``make_token("*:admin", "scp_x:viewer", name="bob")``."""

    def mint(*grants: str, name: str = "tester") -> str:
        parsed = [
            (scope, Role(role))
            for scope, _, role in (g.rpartition(":") for g in grants)
        ]
        return token_create(principal=name, grants=parsed)[1]

    return mint


@pytest.fixture
def admin_token(make_token: Callable[..., str]) -> str:
    return make_token("*:admin", name="root")


@pytest.fixture
def api(admin_token: str) -> ApiClient:
    """A client holding ``*:admin``."""
    return ApiClient(admin_token)


@pytest.fixture
def client_for(make_token: Callable[..., str]) -> Callable[..., ApiClient]:
    """``client_for("scp_x:viewer")`` - a client with exactly those grants."""

    def build(*grants: str, name: str = "tester") -> ApiClient:
        return ApiClient(make_token(*grants, name=name))

    return build


@pytest.fixture
def anon() -> ApiClient:
    return ApiClient()


def create_scope(api: ApiClient, key: str = "default", **fields: Any) -> str:
    body = {
        "title": "Test scope",
        "summary": "A scope for tests",
        "idempotency_key": key,
    }
    response = api.post("/v1/scopes", {**body, **fields})
    assert response.status_code == 201, response.content
    return response.json()["scope_id"]


@pytest.fixture
def scope_id(api: ApiClient) -> str:
    return create_scope(api)


@pytest.fixture
def assert_max_statements() -> Callable[[int], Any]:
    """Like ``django_assert_max_num_queries`` but not counting transaction control.

    The spec's query budgets exclude BEGIN/COMMIT/SAVEPOINT/RELEASE.
    """

    @contextmanager
    def budget(limit: int) -> Iterator[CaptureQueriesContext]:
        with CaptureQueriesContext(connection) as captured:
            yield captured
        statements = [
            q["sql"]
            for q in captured.captured_queries
            if not TRANSACTION_CONTROL.match(q["sql"])
        ]
        assert len(statements) <= limit, (
            f"{len(statements)} statements over a budget of {limit}:\n"
            + "\n".join(statements)
        )

    return budget


def error_of(response: Any) -> dict[str, Any]:
    """The error object of an envelope response, checking the envelope's exact shape."""
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}, body
    assert response["Content-Type"] == "application/json"
    return body["error"]
