"""``X-PowerContext-Request-ID`` on every response, and the per-request log line."""

from __future__ import annotations

import logging
import re

import pytest

from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

REQUEST_ID = re.compile(r"^[0-9a-f]{16}$")


@pytest.mark.parametrize(
    ("method", "path", "authenticated"),
    [
        ("GET", "/v1/scopes", True),  # 200
        ("GET", "/v1/scopes", False),  # 401
        ("GET", "/v1/nope", True),  # 404 outside DRF
        ("DELETE", "/v1/scopes", True),  # 405
        ("GET", "/health/live", False),
        ("GET", "/openapi.json", False),
    ],
)
def test_every_response_carries_a_fresh_request_id(
    api: ApiClient, method: str, path: str, authenticated: bool
) -> None:
    client = api if authenticated else ApiClient()

    ids = [client.request(method, path)["X-PowerContext-Request-ID"] for _ in range(3)]

    assert all(REQUEST_ID.match(value) for value in ids)
    assert len(set(ids)) == 3


def test_caller_request_id_is_ignored(api: ApiClient) -> None:
    response = api.get(
        "/v1/scopes", headers={"X-PowerContext-Request-ID": "0123456789abcdef"}
    )

    assert response["X-PowerContext-Request-ID"] != "0123456789abcdef"


def test_request_log_line_carries_the_same_id(
    api: ApiClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="powercontext.request")

    response = api.get("/v1/scopes")

    request_id = response["X-PowerContext-Request-ID"]
    lines = [r for r in caplog.records if r.name == "powercontext.request"]
    assert [r.request_id for r in lines] == [request_id]
    assert "GET /v1/scopes 200" in lines[0].getMessage()
    assert "principal=root" in lines[0].getMessage()


@pytest.mark.parametrize(
    ("path", "logged"),
    [
        ("/v1/scopes/a%0Afake%20line", "/v1/scopes/a\\nfake line"),
        ("/v1/scopes/%1B%5B31m", "/v1/scopes/\\x1b[31m"),
        ("/v1/scopes/x%E2%80%A8y", "/v1/scopes/x\\u2028y"),
    ],
)
def test_a_path_cannot_forge_a_log_line(
    api: ApiClient, caplog: pytest.LogCaptureFixture, path: str, logged: str
) -> None:
    with caplog.at_level(logging.INFO, logger="powercontext.request"):
        api.get(path)

    (line,) = [
        r.getMessage() for r in caplog.records if r.name == "powercontext.request"
    ]
    assert logged in line
    assert line.isprintable()
