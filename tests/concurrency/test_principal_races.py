"""First mints of one principal under real concurrency on PostgreSQL (decision 0031).

The principal row is inserted first and classified on the unique constraint, so
concurrent first mints agree on one principal and one owner: its owner's mints all
succeed, an operator's land in the same principal, and nobody else gets in.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from powercontext.access.models import AccessChange, ApiToken, PrincipalRecord
from powercontext.access.tokens import token_create
from powercontext.principals import Role
from tests.concurrency.conftest import race
from tests.conftest import ApiClient, create_scope

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def mint(token: str, name: str, scope_id: str) -> Any:
    response = ApiClient(token).post(
        "/v1/tokens", {"name": name, "grants": [{"scope": scope_id, "role": "viewer"}]}
    )
    return response.status_code, response.json()


def test_16_concurrent_first_mints_of_a_name_make_one_principal(
    api: ApiClient,
) -> None:
    scope_id = create_scope(api)
    _, alice = token_create(principal="alice", grants=[(scope_id, Role.ADMIN)])

    results = race(16, lambda i: mint(alice, "ci-bot", scope_id))

    assert Counter(status for status, _ in results) == {201: 16}
    assert {body["name"] for _, body in results} == {"alice/ci-bot"}
    record = PrincipalRecord.objects.get(name="alice/ci-bot")
    assert (record.owner, record.created_by) == ("alice", "alice")
    assert ApiToken.objects.filter(principal="alice/ci-bot").count() == 16
    assert (
        AccessChange.objects.filter(
            action="principal_create", principal="alice/ci-bot"
        ).count()
        == 1
    )
