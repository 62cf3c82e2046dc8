"""Hostile input over real HTTP (invariant 7): what Django's test client cannot send.

A chunked body (no Content-Length), a declared length over the limit with no
body behind it, and raw percent-escapes that are not UTF-8 reach the service
here exactly as a client sends them, through granian with production settings
and a body limit of 64 KiB.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from tests.robustness.conftest import Service, serving_production, suite_database

LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, static_root: Path) -> Iterator[Any]:
    directory = tmp_path_factory.mktemp("live-inputs")
    with (
        suite_database(directory) as database_url,
        serving_production(
            database_url,
            directory,
            static_root,
            POWERCONTEXT_MAX_BODY_BYTES=str(LIMIT),
        ) as service,
    ):
        yield service


def exchange(
    service: Service,
    method: str,
    path: str,
    body: bytes | Iterable[bytes] | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """One request as given (an iterable body goes out chunked): status and JSON."""
    connection = http.client.HTTPConnection(
        "127.0.0.1", service.server.port, timeout=60
    )
    try:
        connection.request(
            method,
            path,
            body=body,
            headers={
                "Authorization": f"Bearer {service.token}",
                "Content-Type": "application/json",
                **(headers or {}),
            },
        )
        response = connection.getresponse()
        assert len(response.getheader("X-PowerContext-Request-ID", "")) == 16
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def scope_body(key: str, size: int | None = None) -> bytes:
    """A scope-creation body, padded with JSON whitespace to ``size`` bytes."""
    body = json.dumps(
        {"title": "Caf\u00e9 \U0001f680", "summary": "chunked", "idempotency_key": key},
        ensure_ascii=False,
    ).encode()
    return body if size is None else body[:-1] + b" " * (size - len(body)) + b"}"


def in_chunks(body: bytes, size: int) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def test_a_chunked_body_is_read_like_a_declared_one(live: Service) -> None:
    # 7-byte chunks split the UTF-8 of the title's non-ASCII characters.
    status, scope = exchange(
        live, "POST", "/v1/scopes", iter(in_chunks(scope_body("chunked"), 7))
    )
    read_status, read = exchange(live, "GET", f"/v1/scopes/{scope['scope_id']}")

    assert status == 201, scope
    assert (read_status, read["title"]) == (200, "Caf\u00e9 \U0001f680")


def test_a_chunked_body_at_the_limit_is_accepted(live: Service) -> None:
    body = scope_body("at-limit", size=LIMIT)

    status, scope = exchange(live, "POST", "/v1/scopes", iter(in_chunks(body, 4096)))

    assert len(body) == LIMIT
    assert status == 201, scope


def test_a_chunked_body_over_the_limit_is_413(live: Service) -> None:
    body = scope_body("over-limit", size=LIMIT + 1)

    status, error = exchange(live, "POST", "/v1/scopes", iter(in_chunks(body, 4096)))

    assert status == 413
    assert error == {
        "error": {
            "code": "request_too_large",
            "message": f"The request body exceeds the limit of {LIMIT} bytes.",
            "details": None,
        }
    }


def test_a_declared_length_over_the_limit_is_413_before_any_body_is_sent(
    live: Service,
) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", live.server.port, timeout=60)
    try:
        connection.putrequest("POST", "/v1/scopes")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(LIMIT + 1))
        connection.endheaders()  # and no body: the answer must not wait for it
        response = connection.getresponse()
        error = json.loads(response.read())
    finally:
        connection.close()

    assert response.status == 413
    assert error["error"]["code"] == "request_too_large"


@pytest.mark.parametrize(
    ("path", "status", "code"),
    [
        ("/v1/scopes/%FF", 404, "scope_not_found"),
        ("/v1/scopes/%C0%AF", 404, "scope_not_found"),  # overlong "/"
        ("/v1/scopes/%ED%A0%80", 404, "scope_not_found"),  # an encoded surrogate
        ("/v1/scopes/%00", 422, "invalid_request"),
        ("/v1/scopes/scp_x/sources/content/%FF%2F..%2F..", 404, "scope_not_found"),
        ("/v1/scopes/scp_x/source-attempts/content/%00", 422, "invalid_request"),
        ("/v1/scopes?limit=%FF", 422, "invalid_request"),
        ("/v1/scopes?%FF=1", 422, "invalid_request"),
        ("/v1/scopes?cursor=%00", 422, "invalid_request"),
        ("/v1/scopes/scp_x/sources?cursor=%FF%FE", 400, "invalid_cursor"),
        ("/v1/nope/%FF", 404, "not_found"),
    ],
)
def test_escapes_that_are_not_utf8_get_a_4xx_envelope(
    live: Service, path: str, status: int, code: str
) -> None:
    answered, error = exchange(live, "GET", path)

    assert (answered, error["error"]["code"]) == (status, code)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b'{"title": "caf\xe9"}', id="latin-1"),
        pytest.param(b"\xef\xbb\xbf{}", id="utf-8-bom"),
        pytest.param(b'{"title": "\xed\xa0\x80"}', id="utf-8-encoded-surrogate"),
        pytest.param(b'{"title": "\xc0\xaf"}', id="overlong-utf-8"),
    ],
)
def test_a_body_that_is_not_utf8_is_422(live: Service, body: bytes) -> None:
    status, error = exchange(
        live,
        "POST",
        "/v1/scopes",
        body,
        headers={"Content-Type": "application/json; charset=latin-1"},
    )

    assert status == 422
    assert error["error"]["details"]["errors"][0]["type"] == "json_invalid"


@pytest.mark.parametrize("source_id", ["a\nb", "y/attempts", "100%", "a?b#c", "sp ace"])
def test_an_accepted_identity_is_readable_through_the_server(
    live: Service, source_id: str
) -> None:
    """The id reaches the view exactly as captured, line feeds included."""
    status, scope = exchange(live, "POST", "/v1/scopes", scope_body(f"ids-{source_id}"))
    capture = {"scope_id": scope["scope_id"], "source_id": source_id, "content": "x"}
    captured, _ = exchange(
        live, "POST", "/v1/sources/content", json.dumps(capture).encode()
    )
    encoded = quote(source_id, safe="")
    base = f"/v1/scopes/{scope['scope_id']}"

    record_status, record = exchange(live, "GET", f"{base}/sources/content/{encoded}")
    audit_status, audit = exchange(
        live, "GET", f"{base}/source-audit/content/{encoded}"
    )

    assert (status, captured) == (201, 202)
    assert (record_status, record["source_id"]) == (200, source_id)
    assert (audit_status, audit["source_id"]) == (200, source_id)
