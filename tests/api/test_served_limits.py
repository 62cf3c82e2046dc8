"""The service as the launcher serves it: request-line and header limits, request
ids, errors.

Runs the real launcher (``python -m powercontext.serve``: granian, and our WSGI
layers in front of Django) against a temporary SQLite database, so it needs no
PostgreSQL and runs in both suite runs.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """The launcher on a fresh SQLite file; yields (base URL, admin token)."""
    data = tmp_path_factory.mktemp("served")
    port = free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "powercontext.settings.local",
        "DATABASE_URL": f"sqlite:///{data / 'db.sqlite3'}",
        "DJANGO_SECRET_KEY": "served-test-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
        "POWERCONTEXT_BIND": f"127.0.0.1:{port}",
        "POWERCONTEXT_WORKERS": "1",
    }
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v", "0"], cwd=ROOT, env=env, check=True)
    minted = subprocess.run(
        [*manage, "createtoken", "--name", "served-test", "--grant", "*:admin"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    token = minted.stdout.strip().splitlines()[-1]
    process = subprocess.Popen(
        [sys.executable, "-m", "powercontext.serve"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/health/live", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        else:
            pytest.fail("the server did not start within 30 s")
        yield base, token
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_longest_legal_url_reaches_the_application(server: tuple[str, str]) -> None:
    """Two 256-character ids of 4-byte characters, percent-encoded (3072 bytes
    each), and a cursor as long as any this service issues (512 characters)."""
    base, token = server
    long_id = quote("\U0001f600" * 256, safe="")
    url = f"{base}/v1/scopes/{long_id}/source-attempts/content/{long_id}"

    response = httpx.get(
        url,
        params={"limit": "100", "cursor": "c" * 512},
        headers={"Authorization": f"Bearer {token}"},
    )

    assert 6500 < len(str(response.request.url)) < 8190 - len("GET  HTTP/1.1")
    assert response.status_code in (400, 404)
    assert set(response.json()) == {"error"}


def test_a_request_line_over_the_limit_is_refused(
    server: tuple[str, str],
) -> None:
    """The request line's limit is explicit (8190 bytes, gunicorn's before
    decision 0044): a longer line never reaches the application."""
    base, token = server

    response = httpx.get(
        f"{base}/v1/scopes",
        params={"cursor": "c" * 9000},
        headers={"Authorization": f"Bearer {token}"},
    )

    assert response.status_code == 414
    assert "X-PowerContext-Request-ID" not in response.headers


def test_header_of_the_largest_size_reaches_the_application(
    server: tuple[str, str],
) -> None:
    base, token = server
    name = "X-Padding"

    response = httpx.get(
        f"{base}/v1/scopes",
        headers={
            "Authorization": f"Bearer {token}",
            name: "p" * (16384 - len(name) - 2),
        },
    )

    assert response.status_code == 200


def test_a_header_over_the_limit_is_refused(server: tuple[str, str]) -> None:
    base, token = server
    name = "X-Padding"

    response = httpx.get(
        f"{base}/v1/scopes",
        headers={
            "Authorization": f"Bearer {token}",
            name: "p" * (16384 - len(name) - 1),
        },
    )

    assert response.status_code == 431
    assert "X-PowerContext-Request-ID" not in response.headers


@pytest.mark.parametrize(("count", "status"), [(100, 200), (101, 431)])
def test_at_most_100_headers_reach_the_application(
    server: tuple[str, str], count: int, status: int
) -> None:
    """httpx sends Host, Accept, Accept-Encoding, Connection, User-Agent and the
    Authorization header: the rest of ``count`` are padding."""
    base, token = server
    padding = {f"X-Padding-{number}": "p" for number in range(count - 6)}

    response = httpx.get(
        f"{base}/v1/scopes", headers={"Authorization": f"Bearer {token}", **padding}
    )

    assert response.status_code == status


def test_responses_carry_request_ids_and_envelopes(
    server: tuple[str, str],
) -> None:
    base, _ = server

    unauthorized = httpx.get(f"{base}/v1/scopes")
    missing = httpx.get(f"{base}/nowhere")

    assert unauthorized.status_code == 401
    assert unauthorized.headers["WWW-Authenticate"] == "Bearer"
    assert missing.json()["error"]["code"] == "not_found"
    assert len(unauthorized.headers["X-PowerContext-Request-ID"]) == 16


def test_chunked_body_over_the_limit_is_413(server: tuple[str, str]) -> None:
    base, token = server

    def chunks() -> Iterator[bytes]:
        yield b'{"title": "'
        for _ in range(17):
            yield b"x" * (1024 * 1024)
        yield b'"}'

    response = httpx.post(
        f"{base}/v1/scopes",
        content=chunks(),
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
        },
        timeout=60,
    )

    assert response.status_code == 413
    assert response.json()["error"]["code"] == "request_too_large"


def test_chunked_body_within_the_limit_is_parsed(server: tuple[str, str]) -> None:
    base, token = server

    def chunks() -> Iterator[bytes]:
        yield b'{"title": "T", "summary": "S", '
        yield b'"idempotency_key": "chunked"}'

    response = httpx.post(
        f"{base}/v1/scopes",
        content=chunks(),
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
        },
    )

    assert response.status_code == 201
