"""The request signals' receivers that powercontext.wsgi leaves out (decision 0028):
only those that can do nothing under the process's settings."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import close_caches
from django.core.cache.backends.locmem import LocMemCache
from django.core.handlers.base import reset_urlconf
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connections, reset_queries
from django.test import Client, override_settings
from django.urls import set_urlconf

from powercontext.api.request_signals import lean_request_signals


class ClosingCache(LocMemCache):
    """A backend whose ``close()`` does something (as memcached's does)."""

    def close(self, **kwargs: Any) -> None:
        pass


@pytest.fixture(autouse=True)
def django_receivers_restored() -> Iterator[None]:
    yield
    request_started.connect(reset_queries)
    request_started.connect(close_old_connections)
    request_finished.connect(close_caches)
    request_finished.connect(reset_urlconf)


def receivers(signal: Any) -> set[Any]:
    return {ref() for _, ref, *_ in signal.receivers}


def test_what_cannot_do_anything_is_left_out() -> None:
    dropped = lean_request_signals()

    assert dropped == [
        "reset_queries",
        "close_old_connections at the start",
        "close_caches",
        "reset_urlconf",
    ]
    assert reset_queries not in receivers(request_started)
    assert close_old_connections not in receivers(request_started)
    assert close_caches not in receivers(request_finished)
    assert reset_urlconf not in receivers(request_finished)


def test_every_request_starts_on_the_project_urlconf(client: Client) -> None:
    """``reset_urlconf`` can do nothing: Django's ``get_response`` sets
    ``ROOT_URLCONF`` before anything resolves, whatever a previous request of the
    thread left behind."""
    lean_request_signals()
    set_urlconf("tests.kernel.no_such_urlconf")  # a previous request's own
    try:
        response = client.get("/admin/login/")  # its template reverses URLs
    finally:
        set_urlconf(None)

    assert response.status_code == 200
    assert b'action="/admin/login/' in response.content


def test_connections_are_still_closed_at_the_end_of_a_request() -> None:
    lean_request_signals()

    assert close_old_connections in receivers(request_finished)


@override_settings(DEBUG=True)
def test_the_query_log_is_still_reset_under_debug() -> None:
    lean_request_signals()

    assert reset_queries in receivers(request_started)


def test_persistent_connections_are_still_checked_at_the_start() -> None:
    original = connections.settings["default"]["CONN_MAX_AGE"]
    connections.settings["default"]["CONN_MAX_AGE"] = 60
    try:
        lean_request_signals()
    finally:
        connections.settings["default"]["CONN_MAX_AGE"] = original

    assert close_old_connections in receivers(request_started)


def test_a_cache_whose_close_does_something_is_still_closed(settings: Any) -> None:
    settings.CACHES = {
        **settings.CACHES,
        "closing": {"BACKEND": f"{__name__}.ClosingCache"},
    }

    dropped = lean_request_signals()

    assert "close_caches" not in dropped
    assert close_caches in receivers(request_finished)
