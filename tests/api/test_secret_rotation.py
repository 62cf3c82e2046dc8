"""Rotating DJANGO_SECRET_KEY breaks no client while the old key is a fallback.

List cursors and admin sessions are signed with ``SECRET_KEY``; keys listed in
``SECRET_KEY_FALLBACKS`` (``DJANGO_SECRET_KEY_FALLBACKS``) still verify. A cursor
handed out before a rotation keeps working after it, and stops working once the
old key leaves the fallbacks. (The same procedure through nginx and a reload:
tests/deploy/test_deploying.py.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.conftest import ApiClient, error_of

pytestmark = pytest.mark.django_db

OLD = "old-key-" + "o" * 50
NEW = "new-key-" + "n" * 50
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cursor_and_next_page(api: ApiClient, scope_id: str, settings) -> tuple[str, list]:
    """A cursor signed with OLD, and the page it leads to."""
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = OLD, []
    for number in range(3):
        api.post(
            "/v1/sources/content",
            {"scope_id": scope_id, "source_id": f"s{number}", "content": "c"},
        )
    first = api.get(f"/v1/scopes/{scope_id}/sources", query={"limit": 1}).json()
    cursor = first["next_cursor"]
    page = api.get(
        f"/v1/scopes/{scope_id}/sources", query={"limit": 1, "cursor": cursor}
    )
    return cursor, page.json()["items"]


def test_a_cursor_outlives_the_rotation_until_its_key_leaves_the_fallbacks(
    api: ApiClient, scope_id: str, settings, cursor_and_next_page: tuple[str, list]
) -> None:
    cursor, next_items = cursor_and_next_page
    path = f"/v1/scopes/{scope_id}/sources"

    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = NEW, [OLD]
    during = api.get(path, query={"limit": 1, "cursor": cursor})
    settings.SECRET_KEY_FALLBACKS = []
    after = api.get(path, query={"limit": 1, "cursor": cursor})

    assert (during.status_code, during.json()["items"]) == (200, next_items)
    assert next_items[0]["source_id"] == "s1"
    assert after.status_code == 400
    assert error_of(after)["code"] == "invalid_cursor"


def test_without_the_fallback_a_rotation_invalidates_cursors_at_once(
    api: ApiClient, scope_id: str, settings, cursor_and_next_page: tuple[str, list]
) -> None:
    cursor, _ = cursor_and_next_page

    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = NEW, []
    response = api.get(
        f"/v1/scopes/{scope_id}/sources", query={"limit": 1, "cursor": cursor}
    )

    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_cursor"


@pytest.mark.parametrize(
    ("fallbacks_during_rotation", "logged_in_after"),
    [([OLD], True), ([], False)],
    ids=["old key kept as fallback", "old key dropped"],
)
def test_an_admin_session_survives_a_rotation_with_the_fallback(
    settings, fallbacks_during_rotation: list[str], logged_in_after: bool
) -> None:
    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = OLD, []
    user = get_user_model().objects.create_superuser("ops", password="p" * 20)
    browser = Client()
    browser.force_login(user)

    settings.SECRET_KEY = NEW
    settings.SECRET_KEY_FALLBACKS = fallbacks_during_rotation
    response = browser.get("/admin/")

    assert (response.status_code == 200) is logged_in_after
    assert response.status_code in (200, 302)


def test_the_fallbacks_come_from_a_comma_separated_variable(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "powercontext.settings.local",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "DJANGO_SECRET_KEY": NEW,
        "DJANGO_SECRET_KEY_FALLBACKS": f"{OLD},{'x' * 60}",
    }
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "shell",
            "-c",
            "from django.conf import settings; print(settings.SECRET_KEY_FALLBACKS)",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )

    assert result.stdout.strip().splitlines()[-1] == str([OLD, "x" * 60])


def test_production_refuses_a_fallback_shorter_than_a_key(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "powercontext.settings.production",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "DJANGO_SECRET_KEY": NEW,
        "DJANGO_SECRET_KEY_FALLBACKS": f"{OLD},short",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY_FALLBACKS" in result.stderr
