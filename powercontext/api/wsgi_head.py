"""The WSGI layers that look at a request's head before Django: what the server
leaves to the application (decision 0044).

granian serves the WSGI interface without three things this service relied on
its server for, so they are done here, on PEP 3333's environ only:

- ``ServerEnvironment``: granian starts every request's environ from a copy of the
  whole process environment - the secret key, the database URL - where an error
  report or a debug page would show it. The environ is reduced to the CGI keys,
  the request's ``HTTP_*`` headers and ``wsgi.*``; a key whose value is the
  process environment's own is dropped (it did not come from the request).
- ``RequestHeadLimits``: explicit, finite limits on the request line (8190 bytes),
  on one header (16384 bytes, name and value) and on the number of headers (100),
  each answered as the server used to: ``414`` and ``431``, a plain body, before the
  application (no request id). granian alone bounds only the whole head (its
  buffer, about 400 KiB).
- ``TrustedProxyScheme``: ``X-Forwarded-Proto`` sets the request's scheme only when
  the peer is one of ``FORWARDED_ALLOW_IPS`` (the proxy's addresses); from anyone
  else it is ignored.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import quote

WSGIApplication = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]

# The longest legal request line - two 256-character ids of 4-byte characters
# percent-encoded (3072 bytes each) and a cursor as this service issues them (at
# most 512 characters) - is about 7 KB (tests/api/test_served_limits.py).
REQUEST_LINE_MAX_BYTES = 8190
HEADER_MAX_BYTES = 16384
HEADERS_MAX_COUNT = 100
# The CGI variables of RFC 3875 and PEP 3333 a server sets for a request.
CGI_KEYS = frozenset(
    {
        "AUTH_TYPE",
        "CONTENT_LENGTH",
        "CONTENT_TYPE",
        "GATEWAY_INTERFACE",
        "PATH_INFO",
        "PATH_TRANSLATED",
        "QUERY_STRING",
        "REMOTE_ADDR",
        "REMOTE_HOST",
        "REMOTE_PORT",
        "REMOTE_USER",
        "REQUEST_METHOD",
        "SCRIPT_NAME",
        "SERVER_NAME",
        "SERVER_PORT",
        "SERVER_PROTOCOL",
        "SERVER_SOFTWARE",
    }
)
# Headers the environ holds without the HTTP_ prefix (PEP 3333).
UNPREFIXED_HEADERS = {
    "CONTENT_TYPE": "Content-Type",
    "CONTENT_LENGTH": "Content-Length",
}
# Characters a request line carries unencoded in its path.
PATH_SAFE = "/:@!$&'()*+,;=-._~"
# A path of these characters only (``quote``'s own safe ones - ASCII letters,
# digits and ``_.-~`` - and ``PATH_SAFE``) is sent as it is: its length needs no
# encoding.
_UNENCODED_PATH = re.compile(f"[A-Za-z0-9_.~{re.escape(PATH_SAFE)}]*")


class ServerEnvironment:
    """Hands ``application`` an environ with nothing of the process environment."""

    def __init__(
        self, application: WSGIApplication, process_environment: dict[str, str]
    ) -> None:
        self.application = application
        self.process_environment = process_environment

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        process = self.process_environment
        request = {
            key: value
            for key, value in environ.items()
            if (key in CGI_KEYS or key.startswith(("HTTP_", "wsgi.")))
            and process.get(key) != value
        }
        return self.application(request, start_response)


class RequestHeadLimits:
    """Refuses a request whose line, one of whose headers, or whose number of
    headers is over its limit, before ``application`` runs."""

    def __init__(self, application: WSGIApplication) -> None:
        self.application = application

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        line = request_line_bytes(environ)
        if line > REQUEST_LINE_MAX_BYTES:
            return refused(
                start_response,
                "414 URI Too Long",
                f"Request line too long ({line} > {REQUEST_LINE_MAX_BYTES} bytes)",
            )
        count, too_large = header_count_and_first_too_large(environ)
        if count > HEADERS_MAX_COUNT:
            return refused(
                start_response,
                "431 Request Header Fields Too Large",
                f"More than {HEADERS_MAX_COUNT} headers",
            )
        if too_large is not None:
            name, size = too_large
            return refused(
                start_response,
                "431 Request Header Fields Too Large",
                f"Header {name} too large ({size} > {HEADER_MAX_BYTES} bytes)",
            )
        return self.application(environ, start_response)


def request_line_bytes(environ: dict[str, Any]) -> int:
    """The length of ``METHOD /path?query HTTP/1.1`` as a client sends it: the
    path as PEP 3333 gives it (decoded, bytes as latin-1) percent-encoded again,
    the query string as sent."""
    path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
    if _UNENCODED_PATH.fullmatch(path) is None:  # else encoding leaves it as it is
        path = quote(path.encode("latin-1"), safe=PATH_SAFE)
    query = environ.get("QUERY_STRING", "")
    target = len(path) + (1 + len(query) if query else 0)
    return (
        len(environ["REQUEST_METHOD"])
        + 1
        + target
        + 1
        + len(environ.get("SERVER_PROTOCOL", "HTTP/1.1"))
    )


def header_count_and_first_too_large(
    environ: dict[str, Any],
) -> tuple[int, tuple[str, int] | None]:
    """How many headers the request has, and the first whose ``Name: value`` is over
    ``HEADER_MAX_BYTES`` (its name and that length), if any.

    A header's name is as long as its environ key without ``HTTP_`` (PEP 3333 only
    upper-cases it and writes ``-`` as ``_``), so only a refused header's name is
    spelled out.
    """
    count = 0
    too_large = None
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            name_length = len(key) - 5
        elif key in UNPREFIXED_HEADERS:
            name_length = len(UNPREFIXED_HEADERS[key])
        else:
            continue
        count += 1
        size = name_length + 2 + len(value)
        if size > HEADER_MAX_BYTES and too_large is None:
            too_large = (header_name(key), size)
    return count, too_large


def header_name(key: str) -> str:
    """The header an environ key stands for, as it is usually spelled."""
    if key in UNPREFIXED_HEADERS:
        return UNPREFIXED_HEADERS[key]
    return key[5:].replace("_", "-").title()


def refused(
    start_response: Callable[..., Any], status: str, reason: str
) -> Iterable[bytes]:
    body = reason.encode("ascii") + b"\n"
    start_response(
        status,
        [
            ("Content-Type", "text/plain; charset=utf-8"),
            ("Content-Length", str(len(body))),
            ("Connection", "close"),
        ],
    )
    return [body]


class TrustedProxyScheme:
    """Takes the scheme from ``X-Forwarded-Proto`` when the peer is a trusted proxy."""

    def __init__(self, application: WSGIApplication, allowed: str) -> None:
        self.application = application
        self.trust_everyone = allowed.strip() == "*"
        self.networks = [] if self.trust_everyone else proxy_networks(allowed)

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        proto = environ.get("HTTP_X_FORWARDED_PROTO")
        if proto is not None and self.trusts(environ.get("REMOTE_ADDR", "")):
            environ["wsgi.url_scheme"] = "https" if proto.lower() == "https" else "http"
        return self.application(environ, start_response)

    def trusts(self, address: str) -> bool:
        if self.trust_everyone:
            return True
        try:
            peer = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(peer in network for network in self.networks)


def proxy_networks(allowed: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """``FORWARDED_ALLOW_IPS``: addresses or networks, comma-separated."""
    try:
        return [
            ipaddress.ip_network(item.strip(), strict=False)
            for item in allowed.split(",")
            if item.strip()
        ]
    except ValueError as exc:
        raise ValueError(f"FORWARDED_ALLOW_IPS={allowed!r}: {exc}") from None


def served(application: WSGIApplication, allowed_proxies: str) -> WSGIApplication:
    """``application`` behind every layer above, outermost first;
    ``allowed_proxies`` is ``FORWARDED_ALLOW_IPS``."""
    return ServerEnvironment(
        RequestHeadLimits(TrustedProxyScheme(application, allowed_proxies)),
        dict(os.environ),
    )
