"""Tokens and grants over HTTP (spec/access.md 1): what each caller may do."""

from __future__ import annotations

import importlib
import io
from collections.abc import Callable
from datetime import timedelta

import pytest
import time_machine
from django.apps import apps
from django.core.management import call_command
from django.utils import timezone

from lifecycle.models import LegalHold
from powercontext.access.models import (
    AccessChange,
    ApiToken,
    PrincipalGrant,
    PrincipalRecord,
    TokenGrant,
)
from powercontext.access.tokens import token_create
from powercontext.principals import Role
from sources.models import ContentSource
from tests.access.conftest import Holder, Scopes, in_days
from tests.conftest import ApiClient, create_scope

pytestmark = pytest.mark.django_db

principals_migration = importlib.import_module(
    "powercontext.access.migrations.0006_principals"
)


def _mint(client: ApiClient, *grants: tuple[str, str], **fields: object) -> object:
    body = {
        "name": "minted",
        "grants": [{"scope": scope, "role": role} for scope, role in grants],
        **fields,
    }
    return client.post("/v1/tokens", body)


def test_a_star_admin_mints_a_working_token_whose_secret_is_shown_once(
    api: ApiClient, scopes: Scopes
) -> None:
    response = _mint(api, (scopes.mine, "contributor"), expires_at=in_days(3))

    assert response.status_code == 201, response.content
    body = response.json()
    minted = ApiClient(body["token"])
    assert body["grants"] == [{"scope": scopes.mine, "role": "contributor"}]
    assert body["token"].startswith(body["prefix"])
    capture = {"scope_id": scopes.mine, "source_id": "s-1", "content": "c"}
    assert minted.post("/v1/sources/content", capture).status_code == 202
    assert minted.get(f"/v1/scopes/{scopes.other}").status_code == 403
    read = api.get(f"/v1/tokens/{body['token_id']}").json()
    assert "token" not in read
    assert read["prefix"] == body["prefix"]
    assert body["token"] not in str(api.get("/v1/tokens").json())
    record = AccessChange.objects.get(token_id=body["token_id"])
    assert (record.action, record.actor) == ("mint", "root")
    assert record.request_id == response["X-PowerContext-Request-ID"]


@pytest.mark.parametrize(
    "grants",
    [
        [("*", "viewer")],
        [("*", "admin")],
        [("OTHER", "viewer")],
        [("MINE", "viewer"), ("OTHER", "viewer")],
    ],
    ids=["star-viewer", "star-admin", "other-scope", "mine-and-other"],
)
def test_a_scope_admin_mints_only_within_its_scopes(
    scopes: Scopes, holder: Callable[..., Holder], grants: list[tuple[str, str]]
) -> None:
    admin = holder(f"{scopes.mine}:admin")
    named = {"MINE": scopes.mine, "OTHER": scopes.other, "*": "*"}
    before = (ApiToken.objects.count(), AccessChange.objects.count())

    response = _mint(admin.client, *[(named[s], r) for s, r in grants])

    assert response.status_code == 403, response.content
    assert response.json()["error"]["code"] == "forbidden"
    assert (ApiToken.objects.count(), AccessChange.objects.count()) == before


def test_a_scope_admin_mints_on_its_scope(
    scopes: Scopes, holder: Callable[..., Holder]
) -> None:
    admin = holder(f"{scopes.mine}:admin")

    response = _mint(admin.client, (scopes.mine, "admin"))

    assert response.status_code == 201, response.content
    assert ApiToken.objects.get(pk=response.json()["token_id"]).created_by == "holder"


def test_a_scope_admin_cannot_mint_into_a_principal_the_operator_creates_later(
    api: ApiClient, scopes: Scopes, holder: Callable[..., Holder]
) -> None:
    """A scope admin mints 'ci-bot' before the operator creates that principal: the
    early token must not become the real ci-bot's (minting is for principals the
    caller created)."""
    alice = holder(f"{scopes.mine}:admin", name="alice")
    early = alice.client.post(
        "/v1/tokens",
        {"name": "ci-bot", "grants": [{"scope": scopes.mine, "role": "viewer"}]},
    )
    real = api.post(
        "/v1/tokens",
        {"name": "ci-bot", "grants": [{"scope": "*", "role": "contributor"}]},
    )
    bot, impostor = ApiClient(real.json()["token"]), ApiClient(early.json()["token"])
    bots_scope = create_scope(bot, key="bots")
    capture = {"scope_id": bots_scope, "source_id": "s-1", "content": "c"}
    assert bot.post("/v1/sources/content", capture).status_code == 202

    attempts = [
        impostor.get(f"/v1/scopes/{bots_scope}/sources"),
        impostor.post(f"/v1/scopes/{bots_scope}/legal-holds", {"reason": "mine now"}),
        impostor.post(
            "/v1/tokens",
            {"name": "x", "grants": [{"scope": bots_scope, "role": "admin"}]},
        ),
    ]
    held = bot.post(f"/v1/scopes/{bots_scope}/legal-holds", {"reason": "audit"})

    assert (early.status_code, early.json()["name"]) == (201, "alice/ci-bot")
    assert (real.status_code, real.json()["name"]) == (201, "ci-bot")
    assert [response.status_code for response in attempts] == [403, 403, 403]
    assert held.json()["set_by"] == "ci-bot"
    assert list(LegalHold.objects.values_list("set_by", flat=True)) == ["ci-bot"]
    assert list(
        PrincipalGrant.objects.filter(scope_id=bots_scope).values_list(
            "principal", flat=True
        )
    ) == ["ci-bot"]
    assert dict(PrincipalRecord.objects.values_list("name", "owner")) == {
        "root": "",
        "alice": "",
        "alice/ci-bot": "alice",
        "ci-bot": "",
    }


def test_a_scope_admin_mints_again_for_its_own_principal_only(
    api: ApiClient, scopes: Scopes, holder: Callable[..., Holder]
) -> None:
    alice = holder(f"{scopes.mine}:admin", name="alice")
    grants = [{"scope": scopes.mine, "role": "viewer"}]
    first = alice.client.post("/v1/tokens", {"name": "ci-bot", "grants": grants})
    second = alice.client.post("/v1/tokens", {"name": "ci-bot", "grants": grants})
    # An operator's principal inside alice's namespace stays the operator's.
    planted = api.post("/v1/tokens", {"name": "alice/planted", "grants": grants})
    before = (ApiToken.objects.count(), AccessChange.objects.count())
    refused = alice.client.post("/v1/tokens", {"name": "planted", "grants": grants})

    assert [first.status_code, second.status_code, planted.status_code] == [201] * 3
    assert first.json()["name"] == second.json()["name"] == "alice/ci-bot"
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "principal_not_yours"
    assert (ApiToken.objects.count(), AccessChange.objects.count()) == before
    assert (
        AccessChange.objects.filter(
            action="principal_create", principal="alice/ci-bot"
        ).count()
        == 1
    )


@pytest.mark.parametrize(
    "name",
    [
        "static-token",
        "local",
        "system",
        "seed",
        "migration",
        "admin:bob",
        "cli:createtoken",
    ],
)
def test_reserved_principal_names_are_refused(
    api: ApiClient, scopes: Scopes, name: str
) -> None:
    before = (ApiToken.objects.count(), PrincipalRecord.objects.count())

    response = api.post(
        "/v1/tokens",
        {"name": name, "grants": [{"scope": scopes.mine, "role": "viewer"}]},
    )

    assert response.status_code == 422, response.content
    assert response.json()["error"]["details"]["reason"] == "reserved"
    assert (ApiToken.objects.count(), PrincipalRecord.objects.count()) == before


def test_no_token_can_take_a_name_the_service_records_when_no_caller_acted(
    api: ApiClient, scopes: Scopes
) -> None:
    """The actors the service writes itself - ``seed_sources``' Sources, the
    principals migration 0006 created for a name only a grant used, an access change
    no caller made - read back from the rows, then asked for by a ``*:admin``."""
    scope_id = seed_sources("2", "--create-scope", "Seeded")
    PrincipalGrant.objects.create(
        principal="grant-only",
        scope_id=scope_id,
        role=Role.VIEWER,
        created_at=timezone.now(),
    )
    PrincipalRecord.objects.all().delete()  # as before migration 0006
    principals_migration.principals_create(apps, None)
    token_create(principal="by-the-system", grants=[(scope_id, Role.VIEWER)])
    recorded = {
        *ContentSource.objects.filter(scope_id=scope_id).values_list(
            "created_by", flat=True
        ),
        PrincipalRecord.objects.get(name="grant-only").created_by,
        *AccessChange.objects.filter(principal="by-the-system").values_list(
            "actor", flat=True
        ),
    }
    before = (ApiToken.objects.count(), PrincipalRecord.objects.count())

    answers = {
        name: api.post(
            "/v1/tokens",
            {"name": name, "grants": [{"scope": scopes.mine, "role": "viewer"}]},
        )
        for name in recorded
    }

    assert len(recorded) == 3
    assert {
        name: (answer.status_code, answer.json()["error"]["details"]["reason"])
        for name, answer in answers.items()
    } == dict.fromkeys(recorded, (422, "reserved"))
    assert (ApiToken.objects.count(), PrincipalRecord.objects.count()) == before


def seed_sources(*args: str) -> str:
    out = io.StringIO()
    call_command(
        "seed_sources", *args, "--no-progress", stdout=out, stderr=io.StringIO()
    )
    return out.getvalue().strip().splitlines()[-1]


def test_a_too_long_namespaced_name_is_refused(
    scopes: Scopes, holder: Callable[..., Holder]
) -> None:
    alice = holder(f"{scopes.mine}:admin", name="a" * 100)

    response = alice.client.post(
        "/v1/tokens",
        {"name": "b" * 60, "grants": [{"scope": scopes.mine, "role": "viewer"}]},
    )

    assert response.status_code == 422, response.content
    assert not ApiToken.objects.filter(principal__startswith="a" * 100 + "/")


@pytest.mark.parametrize(
    ("target", "scope"),
    [("own", "OTHER"), ("own", "*"), ("someone", "OTHER"), ("someone", "*")],
)
def test_a_scope_admin_cannot_grant_outside_its_scopes_nor_raise_itself(
    scopes: Scopes, holder: Callable[..., Holder], target: str, scope: str
) -> None:
    admin = holder(f"{scopes.mine}:admin")
    someone = holder(f"{scopes.mine}:viewer", name="someone")
    token_id = admin.token_id if target == "own" else someone.token_id
    scope_id = {"OTHER": scopes.other, "*": "*"}[scope]

    response = admin.client.post(
        f"/v1/tokens/{token_id}/grants", {"scope": scope_id, "role": "admin"}
    )

    assert response.status_code == 403
    assert not TokenGrant.objects.filter(token_id=token_id, scope_id=scope_id)
    assert admin.client.get(f"/v1/scopes/{scopes.other}").status_code == 403


def test_a_scope_admin_grants_and_removes_on_its_scope(
    api: ApiClient, scopes: Scopes, holder: Callable[..., Holder]
) -> None:
    admin = holder(f"{scopes.mine}:admin")
    someone = holder(f"{scopes.mine}:viewer", f"{scopes.other}:viewer", name="someone")
    path = f"/v1/tokens/{someone.token_id}/grants"

    added = admin.client.post(path, {"scope": scopes.mine, "role": "contributor"})
    missing = admin.client.delete(f"{path}/scp_elsewhere")
    absent = api.delete(f"/v1/tokens/{admin.token_id}/grants/{scopes.other}")
    can_read = someone.client.get(f"/v1/scopes/{scopes.mine}").status_code
    removed = admin.client.delete(f"{path}/{scopes.mine}")
    # The token now reaches only a scope the admin does not administer.
    removed_again = admin.client.delete(f"{path}/{scopes.mine}")

    assert added.status_code == 200, added.content
    assert added.json()["grants"] == [{"scope": scopes.mine, "role": "contributor"}]
    assert can_read == 200
    assert removed.status_code == 200
    assert removed.json()["grants"] == []
    assert missing.status_code == 403  # a scope the admin does not administer
    assert absent.json()["error"]["code"] == "grant_not_found"
    assert removed_again.status_code == 404
    assert removed_again.json()["error"]["code"] == "token_not_found"
    assert someone.client.get(f"/v1/scopes/{scopes.mine}").status_code == 403
    assert list(
        AccessChange.objects.filter(token_id=someone.token_id)
        .order_by("id")
        .values_list("action", "scope_id", "role", "actor")
    )[-2:] == [
        ("grant_add", scopes.mine, "contributor", "holder"),
        ("grant_remove", scopes.mine, "contributor", "holder"),
    ]


def test_a_scope_admin_cannot_remove_a_grant_elsewhere(
    scopes: Scopes, holder: Callable[..., Holder]
) -> None:
    admin = holder(f"{scopes.mine}:admin")
    someone = holder(f"{scopes.other}:viewer", f"{scopes.mine}:viewer", name="x")

    response = admin.client.delete(
        f"/v1/tokens/{someone.token_id}/grants/{scopes.other}"
    )

    assert response.status_code == 403
    assert TokenGrant.objects.filter(token_id=someone.token_id, scope_id=scopes.other)


def test_a_token_cannot_extend_its_own_life_nor_mint_one_outliving_it(
    scopes: Scopes, holder: Callable[..., Holder]
) -> None:
    admin = holder(f"{scopes.mine}:admin", expires_in=timedelta(days=1))
    own = f"/v1/tokens/{admin.token_id}"

    forever = admin.client.patch(own, {"expires_at": None})
    later = admin.client.patch(own, {"expires_at": in_days(2)})
    minted_forever = _mint(admin.client, (scopes.mine, "viewer"))
    sooner = admin.client.patch(own, {"expires_at": in_days(0.5)})

    assert [forever.status_code, later.status_code, minted_forever.status_code] == [
        403,
        403,
        403,
    ]
    assert sooner.status_code == 200, sooner.content
    expires_at = ApiToken.objects.get(pk=admin.token_id).expires_at
    assert expires_at is not None
    assert expires_at < timezone.now() + timedelta(days=0.6)
    assert (
        AccessChange.objects.filter(token_id=admin.token_id, action="expiry").count()
        == 1
    )


def test_revoking_rotating_and_re_dating_need_every_scope_the_token_reaches(
    scopes: Scopes, holder: Callable[..., Holder]
) -> None:
    admin = holder(f"{scopes.mine}:admin")
    wide = holder(f"{scopes.mine}:viewer", f"{scopes.other}:viewer", name="wide")
    narrow = holder(f"{scopes.mine}:viewer", name="narrow")

    refused = [
        admin.client.post(f"/v1/tokens/{wide.token_id}/revoke").status_code,
        admin.client.post(f"/v1/tokens/{wide.token_id}/rotate", {}).status_code,
        admin.client.patch(
            f"/v1/tokens/{wide.token_id}", {"expires_at": in_days(1)}
        ).status_code,
    ]
    revoked = admin.client.post(f"/v1/tokens/{narrow.token_id}/revoke")

    assert refused == [403, 403, 403]
    assert wide.client.get(f"/v1/scopes/{scopes.mine}").status_code == 200
    assert revoked.status_code == 200
    assert revoked.json()["revoked_at"] is not None
    assert narrow.client.get(f"/v1/scopes/{scopes.mine}").status_code == 401


def test_rotation_gives_a_new_secret_with_the_same_grants(
    api: ApiClient, scopes: Scopes, holder: Callable[..., Holder]
) -> None:
    old = holder(f"{scopes.mine}:contributor", name="svc")

    response = api.post(f"/v1/tokens/{old.token_id}/rotate", {"grace_seconds": 0})

    assert response.status_code == 201, response.content
    new = ApiClient(response.json()["token"])
    assert response.json()["grants"] == [{"scope": scopes.mine, "role": "contributor"}]
    assert response.json()["name"] == "svc"
    assert new.get(f"/v1/scopes/{scopes.mine}").status_code == 200
    assert old.client.get(f"/v1/scopes/{scopes.mine}").status_code == 401
    assert api.post(f"/v1/tokens/{old.token_id}/rotate", {}).status_code == 409


def test_rotation_with_grace_keeps_the_old_secret_for_that_long(
    api: ApiClient, scopes: Scopes, holder: Callable[..., Holder]
) -> None:
    old = holder(f"{scopes.mine}:viewer", name="svc")

    response = api.post(f"/v1/tokens/{old.token_id}/rotate", {"grace_seconds": 60})

    assert response.status_code == 201
    assert old.client.get(f"/v1/scopes/{scopes.mine}").status_code == 200
    row = ApiToken.objects.get(pk=old.token_id)
    assert not row.revoked
    assert row.revoked_at is not None
    assert (
        timedelta(seconds=50) < row.revoked_at - row.created_at < timedelta(seconds=70)
    )
    assert response.json()["expires_at"] is None


def test_lists_show_only_tokens_and_grants_on_administered_scopes(
    api: ApiClient, scopes: Scopes, holder: Callable[..., Holder]
) -> None:
    admin = holder(f"{scopes.mine}:admin", name="boss")
    both = holder(f"{scopes.mine}:viewer", f"{scopes.other}:admin", name="both")
    holder(f"{scopes.other}:viewer", name="elsewhere")

    mine = admin.client.get("/v1/tokens").json()["items"]
    everything = api.get("/v1/tokens", query={"limit": 100}).json()["items"]
    filtered = admin.client.get("/v1/tokens", query={"scope_id": scopes.other})

    # root created the scopes: its principal administers them.
    assert sorted(item["name"] for item in mine) == ["boss", "both", "root"]
    shown = next(item for item in mine if item["name"] == "both")
    assert shown["grants"] == [{"scope": scopes.mine, "role": "viewer"}]
    assert {"both", "boss", "elsewhere", "root"} <= {i["name"] for i in everything}
    assert filtered.status_code == 403
    assert both.client.get("/v1/tokens", query={"scope_id": scopes.other}).json()[
        "items"
    ]


def test_lists_are_paged_by_cursor(
    api: ApiClient, holder: Callable[..., Holder]
) -> None:
    for index in range(3):
        holder("*:viewer", name=f"paged-{index}")

    first = api.get("/v1/tokens", query={"limit": 2}).json()
    second = api.get(
        "/v1/tokens", query={"limit": 2, "cursor": first["next_cursor"]}
    ).json()

    ids = [item["token_id"] for item in first["items"] + second["items"]]
    assert ids == sorted(ids)
    assert len(ids) == len(set(ids)) == 4
    assert second["next_cursor"] is None


def test_a_scopes_creator_administers_it_with_every_token_of_its_principal(
    holder: Callable[..., Holder],
) -> None:
    creator = holder("*:contributor", name="carol")
    other_token = holder("*:viewer", name="carol")
    scope_id = create_scope(creator.client, key="carols")

    minted = other_token.client.post(
        "/v1/tokens",
        {"name": "helper", "grants": [{"scope": scope_id, "role": "viewer"}]},
    )

    assert minted.status_code == 201, minted.content
    record = AccessChange.objects.get(action="principal_grant_add")
    assert (record.principal, record.scope_id, record.role) == (
        "carol",
        scope_id,
        "admin",
    )


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"),
    [
        ("get", "/v1/tokens/999999", None, 404, "token_not_found"),
        ("get", "/v1/tokens/abc", None, 422, "invalid_request"),
        ("get", "/v1/tokens/99999999999999999999999", None, 422, "invalid_request"),
        ("post", "/v1/tokens/999999/revoke", None, 404, "token_not_found"),
        ("post", "/v1/tokens", {"name": "x", "grants": []}, 422, "invalid_request"),
        (
            "post",
            "/v1/tokens",
            {"name": "x", "grants": [{"scope": "scp_nope", "role": "viewer"}]},
            404,
            "scope_not_found",
        ),
        (
            "post",
            "/v1/tokens",
            {"name": "x", "grants": [{"scope": "*", "role": "owner"}]},
            422,
            "invalid_request",
        ),
        (
            "post",
            "/v1/tokens",
            {
                "name": "x",
                "grants": [{"scope": "*", "role": "viewer"}],
                "expires_at": "2001-01-01T00:00:00Z",
            },
            422,
            "invalid_request",
        ),
        ("post", "/v1/tokens/1/rotate", {"grace_seconds": -1}, 422, "invalid_request"),
        (
            "patch",
            "/v1/tokens/1",
            {"expires_at": "2001-01-01T00:00:00Z"},
            422,
            "invalid_request",
        ),
        ("patch", "/v1/tokens/1", {}, 422, "invalid_request"),
    ],
)
def test_bad_requests_get_clear_errors(
    api: ApiClient, method: str, path: str, body: object, status: int, code: str
) -> None:
    response = api.request(method.upper(), path, body)

    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code


def test_a_rotated_away_secret_stays_dead_after_its_grace(
    api: ApiClient, scopes: Scopes, holder: Callable[..., Holder]
) -> None:
    old = holder(f"{scopes.mine}:viewer", name="svc")
    rotated = api.post(f"/v1/tokens/{old.token_id}/rotate", {"grace_seconds": 60})
    during = [
        api.patch(f"/v1/tokens/{old.token_id}", {"expires_at": in_days(9)}),
        api.post(f"/v1/tokens/{old.token_id}/rotate", {"grace_seconds": 60}),
        api.post(
            f"/v1/tokens/{old.token_id}/grants",
            {"scope": scopes.other, "role": "admin"},
        ),
    ]

    with time_machine.travel(timezone.now() + timedelta(seconds=61)):
        refused_after = old.client.get(f"/v1/scopes/{scopes.mine}").status_code
        revival = api.patch(f"/v1/tokens/{old.token_id}", {"expires_at": None})
        still = old.client.get(f"/v1/scopes/{scopes.mine}").status_code

    assert rotated.status_code == 201
    assert [r.status_code for r in during] == [409, 409, 409]
    assert {r.json()["error"]["code"] for r in during} == {"token_revoked"}
    assert (refused_after, revival.status_code, still) == (401, 409, 401)
    row = ApiToken.objects.get(pk=old.token_id)
    assert row.revoked_at is not None
    assert row.expires_at is None
    assert ApiToken.objects.count() == 3  # root, old, the one rotation minted


TOKEN_ROUTES = [
    ("get", "/v1/tokens/{id}", None),
    ("patch", "/v1/tokens/{id}", {"expires_at": "IN_A_DAY"}),
    ("patch", "/v1/tokens/{id}", {"expires_at": None}),
    ("post", "/v1/tokens/{id}/revoke", None),
    ("post", "/v1/tokens/{id}/rotate", {}),
    ("post", "/v1/tokens/{id}/rotate", {"grace_seconds": 60}),
    ("post", "/v1/tokens/{id}/grants", {"scope": "MINE", "role": "viewer"}),
    ("post", "/v1/tokens/{id}/grants", {"scope": "OTHER", "role": "admin"}),
    ("delete", "/v1/tokens/{id}/grants/MINE", None),
    ("delete", "/v1/tokens/{id}/grants/OTHER", None),
]


def _access_rows() -> list[object]:
    return [
        list(ApiToken.objects.order_by("pk").values()),
        list(TokenGrant.objects.order_by("pk").values()),
        AccessChange.objects.count(),
    ]


@pytest.mark.parametrize("target", ["unseen", "missing"])
@pytest.mark.parametrize(("method", "path", "body"), TOKEN_ROUTES)
def test_every_token_route_answers_a_token_the_caller_cannot_see_as_get_token(
    scopes: Scopes,
    holder: Callable[..., Holder],
    target: str,
    method: str,
    path: str,
    body: dict[str, object] | None,
) -> None:
    admin = holder(f"{scopes.mine}:admin", name="alice")
    unseen = holder(f"{scopes.other}:viewer", name="elsewhere")
    token_id = {"unseen": unseen.token_id, "missing": unseen.token_id + 1000}[target]
    named = {"MINE": scopes.mine, "OTHER": scopes.other, "IN_A_DAY": in_days(1)}
    sent = None if body is None else {k: named.get(v, v) for k, v in body.items()}  # type: ignore[arg-type]
    url = path.format(id=token_id).replace("MINE", scopes.mine)
    url = url.replace("OTHER", scopes.other)
    reference = admin.client.get(f"/v1/tokens/{unseen.token_id + 1000}")
    before = _access_rows()

    response = admin.client.request(method.upper(), url, sent)

    assert (response.status_code, response.json()) == (
        reference.status_code,
        reference.json(),
    )
    assert reference.status_code == 404
    assert _access_rows() == before
    assert unseen.client.get(f"/v1/scopes/{scopes.other}").status_code == 200


@pytest.mark.parametrize(
    ("whose", "status"),
    [("operators", 403), ("own", 201), ("namespaced", 201)],
)
def test_a_scope_admin_rotates_only_tokens_of_principals_it_controls(
    api: ApiClient,
    scopes: Scopes,
    holder: Callable[..., Holder],
    whose: str,
    status: int,
) -> None:
    """A new secret is a new token of the principal: the minting rule holds."""
    alice = holder(f"{scopes.mine}:admin", name="alice")
    grants = [{"scope": scopes.mine, "role": "viewer"}]
    minted = {
        "operators": lambda: api.post(
            "/v1/tokens", {"name": "ci-bot", "grants": grants}
        ),
        "namespaced": lambda: alice.client.post(
            "/v1/tokens", {"name": "ci-bot", "grants": grants}
        ),
    }
    token_id = alice.token_id if whose == "own" else minted[whose]().json()["token_id"]
    before = ApiToken.objects.count()

    response = alice.client.post(f"/v1/tokens/{token_id}/rotate", {})

    assert response.status_code == status, response.content
    assert ApiToken.objects.count() == before + (status == 201)
