"""Bearer tokens, grants, the static token, auth modes, and the token commands."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Callable
from datetime import timedelta

import pytest
import time_machine
from django.core.management import call_command
from django.utils import timezone

from powercontext.access.models import ApiToken, PrincipalGrant, TokenGrant
from powercontext.access.tokens import token_create, token_hash
from powercontext.principals import Role
from tests.conftest import ApiClient, create_scope, error_of

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "Bearer",
        "Bearer ",
        "Basic dXNlcjpwYXNz",
        "Bearer pct_not-a-real-token",
        "Token abc",
    ],
)
def test_bad_or_missing_token_is_401_with_bearer_challenge(
    authorization: str | None,
) -> None:
    client = ApiClient()
    headers = {} if authorization is None else {"Authorization": authorization}

    response = client.get("/v1/scopes", headers=headers)

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"
    assert error_of(response)["code"] == "unauthorized"


def test_401_comes_before_body_validation() -> None:
    response = ApiClient().post("/v1/scopes", raw=b"{bad")

    assert response.status_code == 401


def test_token_is_stored_only_as_a_hash(make_token: Callable[..., str]) -> None:
    raw = make_token("*:viewer")

    token = ApiToken.objects.get()
    assert token.token_hash == token_hash(raw)
    assert raw.startswith(token.prefix)
    assert raw not in {token.prefix, token.token_hash}


def test_revoked_token_is_rejected(make_token: Callable[..., str]) -> None:
    raw = make_token("*:viewer")
    call_command("revoketoken", ApiToken.objects.get().prefix, stdout=io.StringIO())

    response = ApiClient(raw).get("/v1/scopes")

    assert response.status_code == 401


def test_expired_token_is_rejected() -> None:
    _, raw = token_create(
        principal="temp",
        grants=[("*", Role.VIEWER)],
        expires_at=timezone.now() + timedelta(hours=1),
    )
    assert ApiClient(raw).get("/v1/scopes").status_code == 200

    with time_machine.travel(timezone.now() + timedelta(hours=1, seconds=1)):
        response = ApiClient(raw).get("/v1/scopes")

    assert response.status_code == 401


def test_authentication_resolves_token_and_grants_in_one_query(
    make_token: Callable[..., str], django_assert_num_queries
) -> None:
    raw = make_token("*:viewer", "scp_a:admin")
    client = ApiClient(raw)
    client.get("/v1/scopes/scp_missing")  # first use records last_used_at

    with django_assert_num_queries(2):  # authentication + the scope lookup
        response = client.get("/v1/scopes/scp_missing")

    assert response.status_code == 404


def test_last_used_is_written_at_most_once_a_minute(
    make_token: Callable[..., str],
) -> None:
    raw = make_token("*:viewer")
    start = timezone.now()
    with time_machine.travel(start, tick=False):
        ApiClient(raw).get("/v1/scopes")
    first = ApiToken.objects.get().last_used_at
    with time_machine.travel(start + timedelta(seconds=59), tick=False):
        ApiClient(raw).get("/v1/scopes")
    unchanged = ApiToken.objects.get().last_used_at
    with time_machine.travel(start + timedelta(seconds=61), tick=False):
        ApiClient(raw).get("/v1/scopes")
    later = ApiToken.objects.get().last_used_at

    assert first == start
    assert unchanged == start
    assert later == start + timedelta(seconds=61)


def test_static_token_acts_as_star_admin(settings) -> None:
    settings.POWERCONTEXT_SERVER_AUTH_TOKEN = "static-secret-0123456789"
    client = ApiClient("static-secret-0123456789")

    created = client.post(
        "/v1/scopes", {"title": "T", "summary": "S", "idempotency_key": "static"}
    )

    assert created.status_code == 201
    assert ApiClient("static-secret-wrong").get("/v1/scopes").status_code == 401


def test_disabled_auth_mode_needs_debug(settings) -> None:
    settings.POWERCONTEXT_AUTH_MODE = "disabled"
    settings.DEBUG = False

    assert ApiClient().get("/v1/scopes").status_code == 401

    settings.DEBUG = True
    assert ApiClient().get("/v1/scopes").status_code == 200


def test_settings_refuse_disabled_auth_without_debug() -> None:
    code = "import django; django.setup()"
    env = {
        "DJANGO_SETTINGS_MODULE": "powercontext.settings.test",
        "POWERCONTEXT_AUTH_MODE": "disabled",
        "DJANGO_DEBUG": "false",
        "PATH": "/usr/bin:/bin",
    }
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode != 0
    assert "POWERCONTEXT_AUTH_MODE: disabled is refused" in result.stderr


@pytest.mark.parametrize(
    ("grants", "status"),
    [
        (("*:viewer",), 403),
        (("scp_other:admin",), 403),
        (("*:contributor",), 201),
        (("*:admin",), 201),
    ],
)
def test_creating_a_scope_needs_a_star_contributor_grant(
    client_for: Callable[..., ApiClient], grants: tuple[str, ...], status: int
) -> None:
    response = client_for(*grants).post(
        "/v1/scopes", {"title": "T", "summary": "S", "idempotency_key": "k"}
    )

    assert response.status_code == status


def test_creator_gets_admin_on_the_new_scope_for_its_principal(
    client_for: Callable[..., ApiClient],
) -> None:
    client = client_for("*:contributor", name="carol")
    other_token_of_carol = client_for("scp_elsewhere:viewer", name="carol")

    scope_id = create_scope(client)

    grant = PrincipalGrant.objects.get(scope_id=scope_id)
    assert (grant.role, grant.principal) == (Role.ADMIN, "carol")
    assert not TokenGrant.objects.filter(scope_id=scope_id).exists()
    assert other_token_of_carol.get(f"/v1/scopes/{scope_id}").status_code == 200
    assert (
        client_for("scp_elsewhere:viewer", name="dave")
        .get(f"/v1/scopes/{scope_id}")
        .status_code
        == 403
    )


@pytest.mark.parametrize(
    "path", ["/v1/scopes/{scope}", "/v1/scopes/scp_does_not_exist"]
)
def test_no_grant_is_403_whether_or_not_the_scope_exists(
    api: ApiClient, client_for: Callable[..., ApiClient], path: str
) -> None:
    scope_id = create_scope(api)
    stranger = client_for("scp_elsewhere:admin")

    response = stranger.get(path.format(scope=scope_id))

    assert response.status_code == 403
    assert error_of(response)["code"] == "forbidden"


def test_403_comes_after_body_validation(client_for: Callable[..., ApiClient]) -> None:
    response = client_for("*:viewer").post("/v1/scopes", {"title": 1})

    assert response.status_code == 422


def test_createtoken_prints_the_token_alone_on_the_last_line(scope_id: str) -> None:
    out, err = io.StringIO(), io.StringIO()

    call_command(
        "createtoken",
        "--name",
        "ci",
        "--grant",
        "*:viewer",
        "--grant",
        f"{scope_id}:admin",
        stdout=out,
        stderr=err,
    )

    last_line = out.getvalue().rstrip("\n").split("\n")[-1]
    token = ApiToken.objects.get(principal="ci")
    assert token.token_hash == token_hash(last_line)
    assert sorted(token.grants.values_list("scope_id", "role")) == [
        ("*", "viewer"),
        (scope_id, "admin"),
    ]
    assert ApiClient(last_line).get("/v1/scopes").status_code == 200


@pytest.mark.parametrize("grant", ["nocolon", "*:owner", ":admin"])
def test_createtoken_rejects_bad_grants(grant: str) -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError):
        call_command(
            "createtoken",
            "--name",
            "x",
            "--grant",
            grant,
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )
