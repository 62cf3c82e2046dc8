"""A pytest plugin run inside the reference's own test suite: its apps go live.

Loaded with ``-p live_transport`` by tests/compat/test_reference_suite.py, in the
reference tests' environment (``.venv-ref-tests``, which holds the reference
package), never in this project's. The reference's end-to-end tests build the
reference app and talk to it in-process, through ``httpx.ASGITransport`` or
FastAPI's ``TestClient``. This plugin replaces both, before the test modules are
imported, with real HTTP to the server named by ``PC_COMPAT_BASE_URL``: every
request keeps its method, path, query, headers and body, and goes to that server
instead, carrying ``Authorization: Bearer $PC_COMPAT_TOKEN`` unless it has its own.
The test files themselves run unedited.
"""

from __future__ import annotations

import os
from typing import Any

import httpx
import pytest


def _live(request: httpx.Request) -> httpx.Request:
    """``request`` sent to the live server instead of the in-process app."""
    base = httpx.URL(os.environ["PC_COMPAT_BASE_URL"])
    url = request.url.copy_with(scheme=base.scheme, host=base.host, port=base.port)
    headers = httpx.Headers(request.headers)
    headers["host"] = base.netloc.decode("ascii")
    token = os.environ.get("PC_COMPAT_TOKEN")
    if token and "authorization" not in headers:
        headers["authorization"] = f"Bearer {token}"
    return httpx.Request(
        request.method,
        url,
        headers=headers,
        content=request.read(),
        extensions=request.extensions,
    )


class LiveAsyncTransport(httpx.AsyncHTTPTransport):
    """Stands in for ``httpx.ASGITransport(app=...)``: the app is not used."""

    def __init__(self, app: Any = None, **_options: Any) -> None:
        super().__init__()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await super().handle_async_request(_live(request))


class LiveTransport(httpx.HTTPTransport):
    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return super().handle_request(_live(request))


class LiveTestClient(httpx.Client):
    """Stands in for FastAPI's ``TestClient(app)``: the app is not used."""

    def __init__(
        self, app: Any = None, base_url: str = "http://testserver", **options: Any
    ) -> None:
        headers = options.get("headers")
        super().__init__(
            base_url=base_url,
            headers=headers,
            transport=LiveTransport(),
            follow_redirects=True,
        )


def pytest_configure(config: pytest.Config) -> None:
    if "PC_COMPAT_BASE_URL" not in os.environ:
        raise pytest.UsageError("live_transport needs PC_COMPAT_BASE_URL")
    import fastapi.testclient
    import starlette.testclient

    httpx.ASGITransport = LiveAsyncTransport  # type: ignore[misc]
    fastapi.testclient.TestClient = LiveTestClient  # type: ignore[misc]
    starlette.testclient.TestClient = LiveTestClient  # type: ignore[misc]
