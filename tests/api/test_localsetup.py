"""``localsetup`` (what ``make run`` prints): one local token, reused; URLs that
follow POWERCONTEXT_BIND; an admin password that works."""

from __future__ import annotations

import io
import re
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.contrib.auth import authenticate
from django.core.management import call_command
from django.utils import timezone

from powercontext.access.models import ApiToken, PrincipalRecord
from powercontext.access.tokens import token_create
from powercontext.principals import Role
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db


def localsetup(token_file: Path, *args: str) -> str:
    out = io.StringIO()
    call_command(
        "localsetup",
        "--token-file",
        str(token_file),
        *args,
        stdout=out,
        stderr=io.StringIO(),
    )
    return out.getvalue()


def printed_token(output: str) -> str:
    match = re.search(r"^    (pct_\S+)$", output, re.MULTILINE)
    assert match is not None, output
    return match.group(1)


def active_local_tokens() -> list[str]:
    return list(
        ApiToken.objects.filter(principal="local", revoked=False).values_list(
            "prefix", flat=True
        )
    )


def test_every_run_prints_the_same_token_and_keeps_one_active(tmp_path: Path) -> None:
    runs = [printed_token(localsetup(tmp_path / "token")) for _ in range(3)]

    assert runs[0] == runs[1] == runs[2]
    assert active_local_tokens() == [runs[0][:12]]
    # The local principal, reserved to localsetup, is an operator's principal.
    assert list(PrincipalRecord.objects.values_list("name", "owner", "created_by")) == [
        ("local", "", "cli:localsetup")
    ]
    assert ApiClient(runs[0]).get("/v1/scopes").status_code == 200
    assert (tmp_path / "token").stat().st_mode & 0o777 == 0o600


def test_a_lost_token_file_mints_a_new_token_and_revokes_the_old_ones(
    tmp_path: Path,
) -> None:
    first = printed_token(localsetup(tmp_path / "token"))
    token_create(principal="local", grants=[("*", Role.ADMIN)])  # an older make run's
    (tmp_path / "token").unlink()

    second = printed_token(localsetup(tmp_path / "token"))

    assert second != first
    assert active_local_tokens() == [second[:12]]
    assert ApiClient(first).get("/v1/scopes").status_code == 401
    assert ApiClient(second).get("/v1/scopes").status_code == 200


def test_a_revoked_saved_token_is_replaced(tmp_path: Path) -> None:
    first = printed_token(localsetup(tmp_path / "token"))
    ApiToken.objects.filter(prefix=first[:12]).update(revoked=True)

    second = printed_token(localsetup(tmp_path / "token"))

    assert second != first
    assert ApiClient(second).get("/v1/scopes").status_code == 200


def test_a_saved_token_rotated_away_is_replaced_by_one_that_outlives_the_grace(
    tmp_path: Path,
) -> None:
    """The saved token was rotated with a grace: it still authenticates, but dies
    when the grace ends, so the next run must not print it again."""
    first = printed_token(localsetup(tmp_path / "token"))
    saved = ApiToken.objects.get(prefix=first[:12])
    rotation = ApiClient(first).post(
        f"/v1/tokens/{saved.pk}/rotate", {"grace_seconds": 600}
    )

    second = printed_token(localsetup(tmp_path / "token"))
    with time_machine.travel(timezone.now() + timedelta(seconds=601), tick=False):
        after_the_grace = ApiClient(second).get("/v1/scopes").status_code

    assert rotation.status_code == 201, rotation.content
    assert second != first
    assert after_the_grace == 200
    assert (tmp_path / "token").read_text() == second + "\n"
    # One local token left: the rotated-away one and the rotation's own are revoked.
    assert active_local_tokens() == [second[:12]]
    assert ApiClient(first).get("/v1/scopes").status_code == 401


def test_a_saved_token_given_an_expiry_is_replaced_by_one_without(
    tmp_path: Path,
) -> None:
    first = printed_token(localsetup(tmp_path / "token"))
    saved = ApiToken.objects.get(prefix=first[:12])
    expiry = (timezone.now() + timedelta(days=1)).isoformat()
    patched = ApiClient(first).patch(f"/v1/tokens/{saved.pk}", {"expires_at": expiry})

    second = printed_token(localsetup(tmp_path / "token"))

    assert patched.status_code == 200, patched.content
    assert second != first
    assert ApiToken.objects.get(prefix=second[:12]).expires_at is None
    assert active_local_tokens() == [second[:12]]


def test_tokens_of_other_principals_are_left_alone(tmp_path: Path) -> None:
    _, other = token_create(principal="ci-bot", grants=[("*", Role.ADMIN)])

    localsetup(tmp_path / "token")

    assert ApiClient(other).get("/v1/scopes").status_code == 200


@pytest.mark.parametrize(
    ("bind", "base_url", "curl"),
    [
        ("127.0.0.1:8000", "http://127.0.0.1:8000", "curl -s -H"),
        ("127.0.0.1:9123", "http://127.0.0.1:9123", "curl -s -H"),
        ("0.0.0.0:8080", "http://127.0.0.1:8080", "curl -s -H"),
        ("[::]:8080", "http://[::1]:8080", "curl -s -H"),
        ("localhost", "http://localhost:8000", "curl -s -H"),
        (
            "unix:/run/pc.sock",
            "http://localhost",
            "curl -s --unix-socket /run/pc.sock -H",
        ),
    ],
)
def test_the_urls_follow_the_bind_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bind: str, base_url: str, curl: str
) -> None:
    monkeypatch.setenv("POWERCONTEXT_BIND", bind)

    output = localsetup(tmp_path / "token")

    assert f"powercontext is starting on {base_url}\n" in output
    assert f"{curl} 'Authorization: Bearer " in output
    assert f"' {base_url}/v1/scopes\n" in output
    assert f"Admin: {base_url}/admin/" in output
    assert f"API docs: {base_url}/docs" in output


def test_the_admin_password_printed_logs_in(tmp_path: Path) -> None:
    localsetup(tmp_path / "token")
    output = localsetup(tmp_path / "token")

    password = re.search(r"password \(new on every make run\): (\S+)", output)

    assert password is not None
    assert authenticate(username="admin", password=password.group(1)) is not None
