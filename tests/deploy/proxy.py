"""What deploy/nginx.conf promises, checked through a running deployment."""

from __future__ import annotations

import contextlib
import re
import socket
import time
from collections.abc import Callable, Iterator
from urllib.parse import quote

import httpx

from tests.deploy.deployment import HOST, Deployment
from tests.deploy.host import tls_context
from tests.robustness.conftest import scope_create
from tests.robustness.processes import tail, wait_until


def assert_request_ids_pass_through(deployment: Deployment, token: str) -> None:
    with deployment.client(token) as client:
        response = client.get(
            "/v1/scopes", headers={"X-PowerContext-Request-ID": "0123456789abcdef"}
        )
    request_id = response.headers["X-PowerContext-Request-ID"]
    assert response.status_code == 200, response.text
    assert re.fullmatch(r"[0-9a-f]{16}", request_id)
    assert request_id != "0123456789abcdef"
    wait_until(
        lambda: (
            f"request_id={request_id}" in tail(deployment.nginx_log, 50)
            and f'"request_id": "{request_id}"' in tail(deployment.unit.log_path, 200)
        ),
        timeout=10,
        what="the request id in nginx's and the service's log",
    )


def assert_nginx_serves_static_files(deployment: Deployment) -> None:
    with deployment.client() as client:
        response = client.get("/static/admin/css/base.css")
    assert response.status_code == 200
    assert response.headers["Server"].startswith("nginx")
    assert "X-PowerContext-Request-ID" not in response.headers  # not the service
    assert b"body" in response.content


def assert_https_comes_from_the_proxy(deployment: Deployment, token: str) -> None:
    """Plain HTTP straight to the server is redirected; through nginx it is HTTPS."""
    with deployment.direct() as client:
        direct = client.get("/v1/scopes", headers={"Authorization": f"Bearer {token}"})
    with deployment.client(token) as client:
        proxied = client.get("/v1/scopes")
    assert direct.status_code == 301
    assert direct.headers["Location"].startswith(f"https://{HOST}/")
    assert proxied.status_code == 200


def assert_long_urls_and_large_bodies_reach_the_service(
    deployment: Deployment, token: str
) -> None:
    """The longest legal URL and a 2.4 MB body (nginx's default cap is 1 MB)
    reach the service; a body over 16 MiB gets the 413 envelope from nginx,
    unread, and a smaller one over the service's own limit its 413 from the
    service (never a 502)."""
    long_id = quote("\U0001f600" * 256, safe="")
    limit = 16 * 1024 * 1024
    with deployment.client(token, timeout=60) as client:
        scope_id = scope_create(client, key="large")
        long_url = client.get(
            f"/v1/scopes/{long_id}/source-attempts/content/{long_id}",
            params={"limit": "100", "cursor": "c" * 512},
        )
        large = client.post(
            "/v1/sources/content",
            json={
                "scope_id": scope_id,
                "source_id": "large",
                "content": "\U0001f600" * 200_000,  # 2.4 MB of JSON escapes
            },
        )
        too_large = client.post(
            "/v1/scopes",
            content=b'{"title": "' + b"x" * limit + b'"}',
            headers={"Content-Type": "application/json"},
        )
        over_the_service = client.post(
            "/v1/scopes",
            content=b'{"title": "' + b"x" * (15 * 1024 * 1024) + b'"}',
            headers={"Content-Type": "application/json"},
        )
    assert len(str(long_url.request.url)) > 6500
    assert long_url.status_code in (400, 404)
    assert set(long_url.json()) == {"error"}
    assert large.status_code == 202, large.text
    assert too_large.status_code == 413
    assert too_large.json() == {
        "error": {
            "code": "request_too_large",
            "message": f"The request body exceeds the limit of {limit} bytes.",
            "details": None,
        }
    }
    # 2 workers x 2 threads: the service's own limit is 13 MiB (shape.py).
    assert over_the_service.status_code == 413, over_the_service.text
    assert over_the_service.json()["error"]["code"] == "request_too_large"
    assert over_the_service.headers["X-PowerContext-Request-ID"]


@contextlib.contextmanager
def stalled_requests(
    count: int, connect: Callable[[], socket.socket], start: bytes
) -> Iterator[None]:
    """``count`` requests that sent ``start``, then stop sending."""
    opened = []
    try:
        for _ in range(count):
            conn = connect()
            opened.append(conn)
            conn.sendall(start)
        time.sleep(0.5)
        yield
    finally:
        for conn in opened:
            conn.close()


def half_headers() -> bytes:
    return f"GET /v1/scopes HTTP/1.1\r\nHost: {HOST}\r\n".encode()


def half_body(token: str) -> bytes:
    """A capture whose body stops early: the service blocks reading it."""
    return (
        f"POST /v1/sources/content HTTP/1.1\r\nHost: {HOST}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        'Content-Length: 1000\r\n\r\n{"scope_id": '
    ).encode()


def assert_stalled_clients_hold_no_thread(deployment: Deployment, token: str) -> None:
    """Two workers of two threads: twenty stalled headers and twenty stalled uploads
    through nginx block nothing (nginx buffers both before it passes a request on).

    Sent straight to the server, a stalled upload holds a thread while it reads the
    body; whether twenty of them also starve a new request depends on how the
    workers share connections out at that moment, so that side is not asserted
    here."""

    def proxied() -> socket.socket:
        raw = socket.create_connection(("127.0.0.1", deployment.https_port))
        return tls_context(deployment.chain).wrap_socket(raw, server_hostname=HOST)

    with (
        stalled_requests(20, proxied, half_headers()),
        stalled_requests(20, proxied, half_body(token)),
        deployment.client(timeout=5) as client,
    ):
        started = time.monotonic()
        assert client.get("/health/live").status_code == 200
        assert time.monotonic() - started < 2


def admin_login(deployment: Deployment, password: str) -> httpx.Client:
    """A client logged in to the admin through nginx (CSRF, secure cookies), as a
    browser does it: nginx listens on a port other than 443, so the browser's
    ``Host`` and ``Origin`` name that port."""
    origin = f"https://{HOST}:{deployment.https_port}"
    client = deployment.client(follow_redirects=False)
    client.headers["Host"] = f"{HOST}:{deployment.https_port}"
    page = client.get("/admin/login/")
    assert page.status_code == 200
    csrf = page.cookies["csrftoken"]
    response = client.post(
        "/admin/login/?next=/admin/",
        data={"username": "admin", "password": password, "csrfmiddlewaretoken": csrf},
        headers={"Origin": origin, "Referer": f"{origin}/admin/"},
    )
    assert response.status_code == 302, response.text[:500]
    assert response.headers["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200
    return client
