"""``createtoken`` and ``revoketoken``: bad input is a CommandError and writes nothing.

Over-long or unstorable text used to reach the database (a ``DataError`` traceback
on PostgreSQL, silently stored on SQLite); these run on both databases.
"""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from powercontext.access.models import ApiToken, PrincipalRecord, TokenGrant
from powercontext.access.tokens import token_hash
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db


def createtoken(*args: str) -> str:
    out = io.StringIO()
    call_command("createtoken", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue().strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--name", "n" * 151, "--grant", "*:viewer"], "at most 150 characters"),
        (["--name", "  ", "--grant", "*:viewer"], "must not be blank"),
        (["--name", "a\x00b", "--grant", "*:viewer"], "NUL"),
        (["--name", "a\udcffb", "--grant", "*:viewer"], "unpaired surrogates"),
        (["--name", "ci", "--grant", "s" * 257 + ":viewer"], "at most 256 characters"),
        (["--name", "ci", "--grant", "s\x00:viewer"], "NUL"),
        (["--name", "ci", "--grant", "\udcff:viewer"], "unpaired surrogates"),
        (["--name", "ci", "--grant", " :viewer"], "must not be blank"),
        (["--name", "ci", "--grant", "scp_missing:viewer"], "No scope 'scp_missing'"),
        (
            ["--name", "ci", "--grant", "*:admin", "--grant", "scp_missing:viewer"],
            "No scope 'scp_missing'",
        ),
        (
            ["--name", "ci", "--grant", "*:viewer", "--grant", "*:admin"],
            "more than one role",
        ),
        (["--name", "ci", "--grant", "*:viewer", "--expires-in-days", "0"], "between"),
        (["--name", "ci", "--grant", "*:viewer", "--expires-in-days", "-5"], "between"),
        (
            ["--name", "ci", "--grant", "*:viewer", "--expires-in-days", "36501"],
            "between",
        ),
        (
            ["--name", "ci", "--grant", "*:viewer", "--expires-in-days", "10" * 9],
            "between",
        ),
        (
            ["--name", "ci", "--grant", "*:viewer", "--expires-in-days", "\u0665"],
            "ASCII digits",
        ),
        (
            ["--name", "ci", "--grant", "*:viewer", "--expires-in-days", "1_0"],
            "ASCII digits",
        ),
        (["--name", "local", "--grant", "*:admin"], "reserved"),
        (["--name", "static-token", "--grant", "*:admin"], "reserved"),
        (
            ["--name", "seed", "--grant", "*:admin"],
            r"'seed' is reserved \(local, migration, seed, static-token, system, "
            r"admin:\.\.\., cli:\.\.\.\)",
        ),
        (["--name", "migration", "--grant", "*:viewer"], "reserved"),
        (["--name", "admin:bob", "--grant", "*:viewer"], "reserved"),
        (["--name", "cli:createtoken", "--grant", "*:viewer"], "reserved"),
    ],
)
def test_createtoken_refuses_bad_input_and_writes_nothing(
    args: list[str], message: str
) -> None:
    with pytest.raises(CommandError, match=message):
        createtoken(*args)

    assert not ApiToken.objects.exists()
    assert not TokenGrant.objects.exists()
    assert not PrincipalRecord.objects.exists()


def test_createtoken_creates_the_principal_or_joins_an_existing_one() -> None:
    first = createtoken("--name", "ci-bot", "--grant", "*:viewer")
    second = createtoken("--name", "ci-bot", "--grant", "*:contributor")

    assert ApiClient(first).get("/v1/scopes").status_code == 200
    assert ApiClient(second).get("/v1/scopes").status_code == 200
    record = PrincipalRecord.objects.get()
    assert (record.name, record.owner, record.created_by) == (
        "ci-bot",
        "",
        "cli:createtoken",
    )
    assert ApiToken.objects.filter(principal="ci-bot").count() == 2


def test_createtoken_refuses_a_missing_scope_next_to_an_existing_one(
    api: ApiClient, scope_id: str
) -> None:
    tokens_before = set(ApiToken.objects.values_list("pk", flat=True))

    with pytest.raises(CommandError, match="No scope 'scp_missing'"):
        createtoken(
            "--name",
            "ci",
            "--grant",
            f"{scope_id}:admin",
            "--grant",
            "scp_missing:admin",
        )

    assert set(ApiToken.objects.values_list("pk", flat=True)) == tokens_before
    assert not TokenGrant.objects.filter(scope_id="scp_missing").exists()


def test_createtoken_takes_the_longest_name_and_an_expiry_in_days(
    api: ApiClient, scope_id: str
) -> None:
    name = "n" * 150
    minted_at = timezone.now()

    raw = createtoken(
        "--name", name, "--grant", f"{scope_id}:viewer", "--expires-in-days", "1"
    )

    token = ApiToken.objects.get(principal=name)
    assert token.token_hash == token_hash(raw)
    assert token.expires_at is not None
    assert (
        minted_at + timedelta(days=1)
        <= token.expires_at
        <= timezone.now() + timedelta(days=1)
    )
    assert list(token.grants.values_list("scope_id", "role")) == [(scope_id, "viewer")]
    assert ApiClient(raw).get(f"/v1/scopes/{scope_id}").status_code == 200


@pytest.mark.parametrize(
    "prefix", ["pct_\x00AbCdEf", "pct_\udcffAbCdEf", "pct_" + "A" * 13, "pct_nothere"]
)
def test_revoketoken_refuses_a_prefix_no_token_has(
    admin_token: str, prefix: str
) -> None:
    with pytest.raises(CommandError, match="No token has the prefix"):
        call_command("revoketoken", prefix, stdout=io.StringIO())

    assert ApiToken.objects.get().revoked is False
    assert ApiClient(admin_token).get("/v1/scopes").status_code == 200
