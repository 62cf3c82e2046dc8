"""Minting and revoking tokens in the admin."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from powercontext.access.models import ApiToken, TokenGrant
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db


def test_minting_shows_the_token_once_and_it_works(
    admin_client: Any, scope_id: str
) -> None:
    response = admin_client.post(
        "/admin/api/apitoken/add/",
        {
            "principal": "ops-bot",
            "grants_text": f"*:viewer\n{scope_id}:admin",
            "expires_at": "",
        },
        follow=True,
    )

    page = response.content.decode()
    (raw,) = re.findall(r'<code id="minted-token"[^>]*>(pct_[A-Za-z0-9_-]+)<', page)
    token = ApiToken.objects.get(principal="ops-bot")
    assert "no-store" in response["Cache-Control"]
    assert all(raw not in morsel.value for morsel in response.cookies.values())
    assert all(raw not in morsel.value for morsel in admin_client.cookies.values())
    assert sorted(token.grants.values_list("scope_id", "role")) == [
        ("*", "viewer"),
        (scope_id, "admin"),
    ]
    assert ApiClient(raw).get("/v1/scopes").status_code == 200
    again = admin_client.get(f"/admin/api/apitoken/{token.pk}/change/").content.decode()
    assert raw not in again


@pytest.mark.parametrize(
    ("grants", "message"),
    [
        ("", "This field is required."),
        ("*:owner", "Bad --grant"),
        ("nocolon", "Bad --grant"),
        ("s" * 257 + ":viewer", "at most 256 characters"),
        ("scp_missing:viewer", "No scope"),
        ("*:viewer\n*:admin", "more than one role"),
    ],
)
def test_minting_rejects_bad_grants(
    admin_client: Any, grants: str, message: str
) -> None:
    response = admin_client.post(
        "/admin/api/apitoken/add/", {"principal": "x", "grants_text": grants}
    )

    assert response.status_code == 200  # the form again, with the error
    assert message in html.unescape(response.content.decode())
    assert not ApiToken.objects.exists()
    assert not TokenGrant.objects.exists()


def test_minting_rejects_an_expiry_in_the_past(admin_client: Any) -> None:
    response = admin_client.post(
        "/admin/api/apitoken/add/",
        {
            "principal": "x",
            "grants_text": "*:viewer",
            "expires_at_0": "2001-01-01",
            "expires_at_1": "00:00:00",
        },
    )

    assert response.status_code == 200  # the form again, with the error
    assert "is not in the future" in html.unescape(response.content.decode())
    assert not ApiToken.objects.exists()
    assert not TokenGrant.objects.exists()


def test_revoke_action(admin_client: Any, make_token: Any) -> None:
    raw = make_token("*:viewer", name="leaky")
    token = ApiToken.objects.get(principal="leaky")

    admin_client.post(
        "/admin/api/apitoken/",
        {"action": "revoke_tokens", "_selected_action": [token.pk]},
        follow=True,
    )

    token.refresh_from_db()
    assert token.revoked is True
    assert ApiClient(raw).get("/v1/scopes").status_code == 401


def test_tokens_cannot_be_edited_or_deleted(admin_client: Any, make_token: Any) -> None:
    make_token("*:viewer", name="kept")
    token = ApiToken.objects.get(principal="kept")

    edit = admin_client.post(
        f"/admin/api/apitoken/{token.pk}/change/", {"principal": "x"}
    )
    delete = admin_client.post(
        f"/admin/api/apitoken/{token.pk}/delete/", {"post": "yes"}
    )

    assert (edit.status_code, delete.status_code) == (403, 403)
    assert ApiToken.objects.filter(principal="kept").exists()


# --- Staff permissions mean what they say (spec/limits.md 5) -----------------------


@pytest.fixture
def staff_client(django_user_model: Any, client: Any) -> Any:
    """A logged-in staff user who may view and add tokens, not change them."""
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user(
        "staff", password="pw-not-used-x9", is_staff=True
    )
    user.user_permissions.add(
        *Permission.objects.filter(
            codename__in=["view_apitoken", "add_apitoken"],
            content_type__app_label="api",
        )
    )
    client.force_login(user)
    return client


def test_only_a_superuser_mints_grants_on_every_scope(
    staff_client: Any, scope_id: str
) -> None:
    refused = staff_client.post(
        "/admin/api/apitoken/add/", {"principal": "x", "grants_text": "*:viewer"}
    )
    allowed = staff_client.post(
        "/admin/api/apitoken/add/",
        {"principal": "y", "grants_text": f"{scope_id}:viewer"},
    )

    assert "Only a superuser" in html.unescape(refused.content.decode())
    assert allowed.status_code == 200
    assert not ApiToken.objects.filter(principal="admin:staff/x").exists()
    # Staff other than superusers mint under their own name (decision 0031).
    assert ApiToken.objects.filter(principal="admin:staff/y").exists()


def test_revoking_needs_the_change_permission(staff_client: Any, scope_id: str) -> None:
    from powercontext.access.tokens import token_create
    from powercontext.principals import Role

    token, _ = token_create(principal="victim", grants=[(scope_id, Role.VIEWER)])

    response = staff_client.post(
        "/admin/api/apitoken/",
        {"action": "revoke_tokens", "_selected_action": [token.pk]},
    )

    token.refresh_from_db()
    assert response.status_code in (200, 302)
    assert token.revoked is False


def test_a_superuser_revokes(admin_client: Any, scope_id: str) -> None:
    from powercontext.access.tokens import token_create
    from powercontext.principals import Role

    token, _ = token_create(principal="victim", grants=[(scope_id, Role.VIEWER)])

    admin_client.post(
        "/admin/api/apitoken/",
        {"action": "revoke_tokens", "_selected_action": [token.pk]},
    )

    token.refresh_from_db()
    assert token.revoked is True


def test_a_superuser_names_any_principal_but_a_reserved_one(
    admin_client: Any, scope_id: str
) -> None:
    refused = admin_client.post(
        "/admin/api/apitoken/add/",
        {"principal": "static-token", "grants_text": f"{scope_id}:viewer"},
    )
    allowed = admin_client.post(
        "/admin/api/apitoken/add/",
        {"principal": "ci-bot", "grants_text": f"{scope_id}:viewer"},
    )
    listed = admin_client.get("/admin/api/principalrecord/")

    assert "is reserved" in html.unescape(refused.content.decode())
    assert not ApiToken.objects.filter(principal="static-token").exists()
    assert allowed.status_code == 200
    assert ApiToken.objects.filter(principal="ci-bot").exists()
    assert "ci-bot" in listed.content.decode()
