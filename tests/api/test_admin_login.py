"""Failed admin logins are limited per address and logged (spec/limits.md 5)."""

from __future__ import annotations

import importlib
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client, override_settings
from django.urls import clear_url_caches

from powercontext.api import ratelimit

pytestmark = pytest.mark.django_db
LOGIN = "/admin/login/"


@pytest.fixture(autouse=True)
def fresh_buckets() -> Iterator[None]:
    ratelimit._local.buckets.clear()
    yield
    ratelimit._local.buckets.clear()


@pytest.fixture
def operator(django_user_model: Any) -> Any:
    return django_user_model.objects.create_superuser(
        "operator", password="right-password-9x"
    )


def login(client: Client, password: str) -> Any:
    return client.post(LOGIN, {"username": "operator", "password": password})


@override_settings(POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES="3/min")
def test_failed_logins_are_limited_even_for_the_right_password(
    operator: Any, caplog: pytest.LogCaptureFixture
) -> None:
    client = Client()
    with caplog.at_level(logging.WARNING, logger="powercontext.admin"):
        failures = [login(client, f"wrong-{n}").status_code for n in range(3)]
        refused = login(client, "right-password-9x")

    assert failures == [200, 200, 200]  # the form again
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1
    assert "_auth_user_id" not in client.session
    failed = [r.getMessage() for r in caplog.records if "login failed" in r.message]
    assert len(failed) == 3
    assert all("wrong-" not in message for message in failed)  # never the password


@override_settings(POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES="3/min")
def test_a_successful_login_is_not_counted(operator: Any) -> None:
    client = Client()
    statuses = [login(client, "right-password-9x").status_code for _ in range(5)]

    assert statuses == [302] * 5


def test_the_admin_can_be_turned_off() -> None:
    import powercontext.urls

    try:
        with override_settings(POWERCONTEXT_ADMIN_ENABLED=False):
            importlib.reload(powercontext.urls)
            clear_url_caches()
            response = Client().get(LOGIN)
    finally:
        importlib.reload(powercontext.urls)
        clear_url_caches()

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_the_admin_can_move() -> None:
    import powercontext.urls

    try:
        with override_settings(POWERCONTEXT_ADMIN_PATH="console/"):
            importlib.reload(powercontext.urls)
            clear_url_caches()
            moved = Client().get("/console/login/")
            old = Client().get(LOGIN)
    finally:
        importlib.reload(powercontext.urls)
        clear_url_caches()

    assert moved.status_code == 200
    assert old.status_code == 404
