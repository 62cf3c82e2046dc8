"""Every URL pattern has one readable route label: ``{name}`` for each parameter.

The request line's ``route`` and the metrics' ``route`` label are the template of
the pattern that matched, whether the pattern is a ``path()`` with converters or a
``re_path()`` with named groups.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator

import pytest
from django.urls import URLResolver, get_resolver

from powercontext.api.observability import route_template
from tests.api.test_observability import as_json_line, request_records
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

READABLE = re.compile(r"[a-z0-9_./{}-]*")


def _routes(patterns: list, prefix: str = "") -> Iterator[str]:
    """Every pattern's ``ResolverMatch.route``: the levels joined as Django joins
    them (an inner level's leading ``^`` dropped)."""
    for pattern in patterns:
        route = str(pattern.pattern)
        joined = prefix + route.removeprefix("^") if prefix else route
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, joined)
        else:
            yield joined


ROUTES = sorted(set(_routes(get_resolver().url_patterns)))


@pytest.mark.parametrize("route", ROUTES)
def test_every_route_reads_as_a_template(route: str) -> None:
    assert READABLE.fullmatch(route_template(route)), route_template(route)


def test_no_two_routes_share_a_template() -> None:
    templates = [route_template(route) for route in ROUTES]

    assert len(set(templates)) == len(templates)


@pytest.mark.parametrize(
    ("path", "template"),
    [
        (
            "/v1/scopes/{scope}/sessions/a/b/envelope",
            "v1/scopes/{scope_id}/sessions/{session_id}/envelope",
        ),
        (
            "/v1/scopes/{scope}/sessions/a/working-notes",
            "v1/scopes/{scope_id}/sessions/{session_id}/working-notes",
        ),
        ("/v1/scopes/{scope}/sources", "v1/scopes/{scope_id}/sources"),
        ("/mcp", "mcp"),
        ("/no/such/page", "{path}"),
    ],
)
def test_the_request_line_names_the_template(
    api: ApiClient,
    scope_id: str,
    caplog: pytest.LogCaptureFixture,
    path: str,
    template: str,
) -> None:
    caplog.set_level(logging.INFO, logger="powercontext.request")

    api.get(path.format(scope=scope_id))

    (record,) = request_records(caplog)
    assert as_json_line(record)["route"] == template
