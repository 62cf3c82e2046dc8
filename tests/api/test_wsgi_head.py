"""The WSGI layers in front of Django (powercontext/api/wsgi_head.py), on
PEP 3333 environs as a server hands them over: granian copies the process
environment into each, and the layers keep it from the application."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from powercontext.api.wsgi_head import (
    RequestHeadLimits,
    ServerEnvironment,
    TrustedProxyScheme,
    header_count_and_first_too_large,
    request_line_bytes,
)

PROCESS = {
    "DJANGO_SECRET_KEY": "s" * 50,
    "DATABASE_URL": "postgres://user:password@db/powercontext",
    "HTTP_PROXY": "http://proxy.internal:3128",
    "CONTENT_TYPE": "text/plain",
    "PATH": "/usr/bin",
}


def request_environ(**extra: Any) -> dict[str, Any]:
    """What granian passes: the process environment, then the request's keys."""
    return {
        **PROCESS,
        "REQUEST_METHOD": "GET",
        "SCRIPT_NAME": "",
        "PATH_INFO": "/v1/scopes",
        "QUERY_STRING": "",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(),
        **extra,
    }


class Seen:
    """The innermost application: keeps the environ it was given, answers 200."""

    environ: dict[str, Any] | None = None

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        self.environ = environ
        start_response("200 OK", [])
        return [b"ok"]


def status_of(
    application: Callable[..., Iterable[bytes]], environ: dict[str, Any]
) -> int:
    statuses: list[str] = []
    application(environ, lambda status, headers: statuses.append(status))
    return int(statuses[0].split()[0])


def test_nothing_of_the_process_environment_reaches_the_application() -> None:
    seen = Seen()

    ServerEnvironment(seen, PROCESS)(request_environ(), lambda *a: None)

    assert seen.environ is not None
    assert not set(PROCESS) & set(seen.environ)
    assert seen.environ["PATH_INFO"] == "/v1/scopes"
    assert seen.environ["HTTP_HOST"] == "127.0.0.1:8000"
    assert {"wsgi.url_scheme", "wsgi.input"} <= set(seen.environ)


def test_the_requests_own_headers_win_over_the_process_environment() -> None:
    seen = Seen()
    environ = request_environ(HTTP_PROXY="sent", CONTENT_TYPE="application/json")

    ServerEnvironment(seen, PROCESS)(environ, lambda *a: None)

    assert seen.environ is not None
    assert seen.environ["HTTP_PROXY"] == "sent"
    assert seen.environ["CONTENT_TYPE"] == "application/json"


@pytest.mark.parametrize(
    ("extra", "status"),
    [
        ({"QUERY_STRING": "c" * (8190 - len("GET /v1/scopes? HTTP/1.1"))}, 200),
        ({"QUERY_STRING": "c" * (8191 - len("GET /v1/scopes? HTTP/1.1"))}, 414),
        # Four bytes of UTF-8 as PEP 3333 gives them, twelve on the wire.
        ({"PATH_INFO": "/" + "\U0001f600".encode().decode("latin-1") * 681}, 200),
        ({"PATH_INFO": "/" + "\U0001f600".encode().decode("latin-1") * 682}, 414),
        ({"HTTP_X_PADDING": "p" * (16384 - len("X-Padding: "))}, 200),
        ({"HTTP_X_PADDING": "p" * (16385 - len("X-Padding: "))}, 431),
        ({f"HTTP_X_{number}": "p" for number in range(99)}, 200),
        ({f"HTTP_X_{number}": "p" for number in range(100)}, 431),
    ],
    ids=[
        "line at the limit",
        "line over",
        "encoded path at the limit",
        "encoded path over",
        "header at the limit",
        "header over",
        "100 headers",
        "101 headers",
    ],
)
def test_request_head_limits(extra: dict[str, str], status: int) -> None:
    environ = request_environ(**extra)
    for key in PROCESS:
        environ.pop(key)

    assert status_of(RequestHeadLimits(Seen()), environ) == status


@pytest.mark.parametrize(
    ("allowed", "peer", "proto", "scheme"),
    [
        ("127.0.0.1", "127.0.0.1", "https", "https"),
        ("127.0.0.1", "10.9.9.9", "https", "http"),
        ("10.0.0.0/24, 127.0.0.1", "10.0.0.7", "https", "https"),
        ("*", "192.0.2.1", "https", "https"),
        ("127.0.0.1", "127.0.0.1", "http", "http"),
        ("::1", "::1", "https", "https"),
    ],
)
def test_only_a_trusted_proxy_sets_the_scheme(
    allowed: str, peer: str, proto: str, scheme: str
) -> None:
    seen = Seen()
    environ = request_environ(REMOTE_ADDR=peer, HTTP_X_FORWARDED_PROTO=proto)

    TrustedProxyScheme(seen, allowed)(environ, lambda *a: None)

    assert seen.environ is not None
    assert seen.environ["wsgi.url_scheme"] == scheme


def test_an_unreadable_list_of_proxies_is_refused_naming_the_variable() -> None:
    with pytest.raises(ValueError, match=re.escape("FORWARDED_ALLOW_IPS='10.0.0.300'")):
        TrustedProxyScheme(Seen(), "10.0.0.300")


# What a client sends, spelled out: the request line with the path percent-encoded
# (PEP 3333 gives it decoded, its bytes as latin-1), and each header's line.
def sent_request_line(environ: dict[str, Any]) -> str:
    path = quote(
        (environ["SCRIPT_NAME"] + environ["PATH_INFO"]).encode("latin-1"),
        safe="/:@!$&'()*+,;=-._~",
    )
    query = environ["QUERY_STRING"]
    target = f"{path}?{query}" if query else path
    return f"{environ['REQUEST_METHOD']} {target} {environ['SERVER_PROTOCOL']}"


@settings(max_examples=300, deadline=None)
@given(
    path=st.text(
        st.sampled_from(list("%?# \"<>\\^`{|}[]\x00\x7f\xe9/:@!$&'()*+,;=-._~aZ9"))
        | st.characters(max_codepoint=255),
        max_size=40,
    ),
    script=st.sampled_from(["", "/prefix"]),
    query=st.text(st.characters(max_codepoint=126), max_size=20),
)
@example(path="100%", script="", query="")
@example(path="caf\xc3\xa9 ?#", script="/prefix", query="a=1")
def test_the_request_line_is_measured_as_the_client_sent_it(
    path: str, script: str, query: str
) -> None:
    environ = request_environ(
        PATH_INFO="/" + path, SCRIPT_NAME=script, QUERY_STRING=query
    )

    assert request_line_bytes(environ) == len(sent_request_line(environ))


@settings(max_examples=200, deadline=None)
@given(
    headers=st.dictionaries(
        st.from_regex(r"HTTP_[A-Z][A-Z0-9_]{0,20}", fullmatch=True)
        | st.sampled_from(["CONTENT_TYPE", "CONTENT_LENGTH", "HTTP_CONTENT_TYPE"]),
        st.sampled_from(["", "v", "v" * 16370, "v" * 16400]),
        max_size=6,
    )
)
def test_headers_are_counted_and_the_first_too_large_one_is_named(
    headers: dict[str, str],
) -> None:
    # Content-Type may come twice: CONTENT_TYPE and HTTP_CONTENT_TYPE.
    sent = [
        ((key[5:] if key.startswith("HTTP_") else key).replace("_", "-").title(), value)
        for key, value in headers.items()
    ]
    first_too_large = next(
        (
            (name, len(f"{name}: {value}"))
            for name, value in sent
            if len(f"{name}: {value}") > 16384
        ),
        None,
    )

    assert header_count_and_first_too_large(headers) == (len(sent), first_too_large)
