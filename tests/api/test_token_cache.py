"""The per-worker token cache (docs/decisions/0008): what it saves and what it
must never change.

A token accepted less than ``POWERCONTEXT_TOKEN_CACHE_SECONDS`` ago is answered
from memory. It may keep a removed grant or a revocation done by another worker
for that long - never longer - and it may never refuse a grant given meanwhile,
accept an expired token, or hide a new scope from the creator's list.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.test import override_settings

from powercontext.access import tokens
from powercontext.access.models import ApiToken, TokenGrant
from powercontext.access.tokens import token_create, token_revoke
from powercontext.principals import Role
from tests.conftest import ApiClient, create_scope

pytestmark = pytest.mark.django_db
TTL = 30.0


@pytest.fixture(autouse=True)
def cache_on() -> Iterator[None]:
    tokens._accepted.clear()
    with override_settings(POWERCONTEXT_TOKEN_CACHE_SECONDS=TTL):
        yield
    tokens._accepted.clear()


def capture(client: ApiClient, scope_id: str, source_id: str) -> int:
    body = {"scope_id": scope_id, "source_id": source_id, "content": "c"}
    return client.post("/v1/sources/content", body).status_code


def test_a_cached_token_costs_no_statement(
    api: ApiClient, scope_id: str, assert_max_statements: object
) -> None:
    api.get(f"/v1/scopes/{scope_id}")  # read and cached

    with assert_max_statements(1) as captured:  # type: ignore[operator]
        response = api.get(f"/v1/scopes/{scope_id}")

    assert response.status_code == 200
    assert "api_apitoken" not in " ".join(q["sql"] for q in captured.captured_queries)


def test_a_grant_given_after_caching_is_honoured_at_once(
    api: ApiClient, scope_id: str
) -> None:
    token, raw = token_create(principal="late", grants=[("scp_other", Role.VIEWER)])
    client = ApiClient(raw)
    assert capture(client, scope_id, "before") == 403  # cached without the grant
    # Another worker grants it (a direct write: this process's cache knows nothing).
    TokenGrant.objects.create(token=token, scope_id=scope_id, role=Role.CONTRIBUTOR)

    assert capture(client, scope_id, "after") == 202


def test_the_creator_sees_its_new_scope_at_once(make_token: object) -> None:
    raw = make_token("*:contributor", name="creator")  # type: ignore[operator]
    creator = ApiClient(raw)
    assert creator.get("/v1/scopes").status_code == 200  # cached

    new_scope = create_scope(creator, key="fresh")

    listed = [s["scope_id"] for s in creator.get("/v1/scopes").json()["items"]]
    assert new_scope in listed
    assert capture(creator, new_scope, "s-1") == 202


def test_a_revocation_in_this_worker_applies_at_once(
    api: ApiClient, scope_id: str
) -> None:
    token, raw = token_create(principal="gone", grants=[(scope_id, Role.VIEWER)])
    client = ApiClient(raw)
    assert client.get(f"/v1/scopes/{scope_id}").status_code == 200

    token_revoke(prefix=token.prefix)

    assert client.get(f"/v1/scopes/{scope_id}").status_code == 401


@override_settings(POWERCONTEXT_TOKEN_CACHE_SECONDS=0.3)
def test_a_revocation_elsewhere_applies_within_the_cache_time(scope_id: str) -> None:
    token, raw = token_create(principal="gone", grants=[(scope_id, Role.VIEWER)])
    client = ApiClient(raw)
    assert client.get(f"/v1/scopes/{scope_id}").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(revoked=True)  # another worker

    within = client.get(f"/v1/scopes/{scope_id}").status_code
    time.sleep(0.35)
    after = client.get(f"/v1/scopes/{scope_id}").status_code

    assert (within, after) == (200, 401)


def test_an_expired_token_is_refused_even_from_the_cache(scope_id: str) -> None:
    expires = datetime.now(UTC) + timedelta(minutes=5)
    _, raw = token_create(
        principal="short", grants=[(scope_id, Role.VIEWER)], expires_at=expires
    )
    client = ApiClient(raw)
    assert client.get(f"/v1/scopes/{scope_id}").status_code == 200

    with time_machine.travel(expires + timedelta(seconds=1)):
        response = client.get(f"/v1/scopes/{scope_id}")

    assert response.status_code == 401


def test_a_removed_grant_refused_after_reload_is_403(scope_id: str) -> None:
    token, raw = token_create(principal="shrunk", grants=[(scope_id, Role.ADMIN)])
    client = ApiClient(raw)
    assert capture(client, scope_id, "a") == 202
    TokenGrant.objects.filter(token=token).update(role=Role.VIEWER)

    # Still cached as admin: the capture passes within the cache time...
    assert capture(client, scope_id, "b") == 202
    tokens._accepted.clear()  # ...and is refused once the cache is read again.
    assert capture(client, scope_id, "c") == 403
