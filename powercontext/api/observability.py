"""What the request line and the metrics say about one request.

The route is the template of the URL pattern that matched
(``v1/scopes/{scope_id}/sessions/{session_id}/envelope``), never the path: bounded
label values for metrics, and no identifiers of callers' data in them. Path
converters (``<str:scope_id>``) and regular expressions' named groups
(``(?P<session_id>[\\s\\S]+)``) both read ``{name}``, so a route reads the same
whichever way its pattern is written. Queries are counted on every database
connection the request used. A W3C ``traceparent`` header is passed into the log
line when it is well formed, so a request can be followed from the caller's trace
into ours.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

from django.db import connections
from django.http import HttpRequest

# version-traceid-parentid-flags (W3C Trace Context 3.2); all-zero ids are invalid.
_TRACEPARENT = re.compile(
    r"[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}"
)


_CONVERTER = re.compile(r"<(?:\w+:)?(\w+)>")
# A named group whose pattern holds at most one level of parentheses.
_NAMED_GROUP = re.compile(r"\(\?P<(\w+)>(?:[^()\\]|\\.|\((?:[^()\\]|\\.)*\))*\)")


def route_of(request: HttpRequest) -> str:
    """The template of the URL pattern that matched ``request`` (``-`` when none
    did)."""
    match = getattr(request, "resolver_match", None)
    route = getattr(match, "route", None)
    return route_template(route) if route else "-"


@functools.lru_cache(maxsize=512)
def route_template(route: str) -> str:
    """``route`` (Django's ``ResolverMatch.route``) as a readable template: each
    parameter ``{name}``, the anchors and an optional trailing slash dropped, and
    an unnamed catch-all ``.*`` read as ``{path}``."""
    template = _CONVERTER.sub(r"{\1}", _NAMED_GROUP.sub(r"{\1}", route))
    template = template.removeprefix("^").removesuffix("\\Z").removesuffix("$")
    return template.removesuffix("/?").replace(".*", "{path}")


def traceparent_of(request: HttpRequest) -> str | None:
    """The caller's ``traceparent``, when it is one (version ``ff`` is invalid)."""
    value = request.META.get("HTTP_TRACEPARENT", "")
    if len(value) == 55 and _TRACEPARENT.fullmatch(value) and value[:2] != "ff":
        return value
    return None


class QueryCount:
    """Counts the statements run on every database connection while it is open."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(
        self,
        execute: Callable[..., Any],
        sql: str,
        params: Any,
        many: bool,
        context: Any,
    ) -> Any:
        self.count += 1
        return execute(sql, params, many, context)

    @contextlib.contextmanager
    def counting(self) -> Iterator[QueryCount]:
        with contextlib.ExitStack() as stack:
            for alias in connections:
                stack.enter_context(connections[alias].execute_wrapper(self))
            yield self
