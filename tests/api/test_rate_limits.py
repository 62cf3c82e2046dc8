"""Rate limits through the API (spec/limits.md 3), with the per-worker memory
limiter the embedded default uses; tests/robustness/test_rate_limits_live.py runs
them through Redis with two granian workers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from django.test import override_settings

from powercontext.api import ratelimit
from tests.conftest import ApiClient, error_of

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_buckets() -> Iterator[None]:
    ratelimit._local.buckets.clear()
    yield
    ratelimit._local.buckets.clear()


def capture(client: ApiClient, scope_id: str, source_id: str) -> object:
    body = {"scope_id": scope_id, "source_id": source_id, "content": "c"}
    return client.post("/v1/sources/content", body)


@override_settings(POWERCONTEXT_RATE_LIMIT_WRITE="3/min")
def test_writes_over_the_limit_are_429_with_retry_after(
    api: ApiClient, scope_id: str
) -> None:
    statuses = [capture(api, scope_id, f"s-{n}").status_code for n in range(5)]
    refused = capture(api, scope_id, "s-refused")

    assert statuses == [202, 202, 202, 429, 429]
    assert error_of(refused)["code"] == "rate_limited"
    assert 1 <= int(refused["Retry-After"]) <= 20  # the next slot, 20 s apart
    assert api.get(f"/v1/scopes/{scope_id}").status_code == 200  # reads apart


@override_settings(POWERCONTEXT_RATE_LIMIT_READ="2/min")
def test_reads_have_their_own_limit(api: ApiClient, scope_id: str) -> None:
    statuses = [api.get(f"/v1/scopes/{scope_id}").status_code for _ in range(3)]

    assert statuses == [200, 200, 429]
    assert capture(api, scope_id, "still-writes").status_code == 202


@override_settings(POWERCONTEXT_RATE_LIMIT_WRITE="1/min")
def test_each_principal_has_its_own_budget(
    client_for: Callable[..., ApiClient], scope_id: str
) -> None:
    alice = client_for("*:contributor", name="alice")
    bob = client_for("*:contributor", name="bob")
    alice_again = client_for("*:contributor", name="alice")  # another token

    assert capture(alice, scope_id, "a-1").status_code == 202
    assert capture(bob, scope_id, "b-1").status_code == 202
    assert capture(alice_again, scope_id, "a-2").status_code == 429


@override_settings(POWERCONTEXT_RATE_LIMIT_WRITE="1/min")
def test_the_limit_comes_before_the_body_is_read(api: ApiClient, scope_id: str) -> None:
    assert capture(api, scope_id, "first").status_code == 202

    malformed = api.post("/v1/sources/content", raw=b"{not json")

    assert (malformed.status_code, error_of(malformed)["code"]) == (429, "rate_limited")


@override_settings(POWERCONTEXT_RATE_LIMIT_WRITE="1/min")
def test_unauthenticated_requests_are_401_not_counted(
    anon: ApiClient, api: ApiClient, scope_id: str
) -> None:
    assert capture(anon, scope_id, "x").status_code == 401
    assert capture(api, scope_id, "y").status_code == 202


@override_settings(POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES="3/min")
@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "Bearer pct_not-a-token"},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {},
    ],
    ids=["unknown-token", "wrong-scheme", "no-token"],
)
def test_failed_authentications_per_address_are_limited(
    api: ApiClient, scope_id: str, headers: dict[str, str]
) -> None:
    stranger = ApiClient()
    statuses = [
        stranger.get(f"/v1/scopes/{scope_id}", headers=headers).status_code
        for _ in range(5)
    ]

    assert statuses == [401, 401, 401, 429, 429]
    assert api.get(f"/v1/scopes/{scope_id}").status_code == 200  # valid: never


@override_settings(
    POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES="1/min",
    POWERCONTEXT_CLIENT_ADDRESS_HEADER="X-Real-IP",
)
def test_the_address_comes_from_the_configured_header(scope_id: str) -> None:
    bad = {"Authorization": "Bearer pct_nope"}
    first = ApiClient().get(
        f"/v1/scopes/{scope_id}", headers={**bad, "X-Real-IP": "10.0.0.1"}
    )
    other = ApiClient().get(
        f"/v1/scopes/{scope_id}", headers={**bad, "X-Real-IP": "10.0.0.2"}
    )
    again = ApiClient().get(
        f"/v1/scopes/{scope_id}", headers={**bad, "X-Real-IP": "10.0.0.1"}
    )

    assert (first.status_code, other.status_code, again.status_code) == (
        401,
        401,
        429,
    )


@override_settings(POWERCONTEXT_RATE_LIMIT_READ="1/min")
def test_health_is_exempt() -> None:
    statuses = [ApiClient().get("/health/live").status_code for _ in range(5)]

    assert statuses == [200] * 5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("200/s", ratelimit.Rate(200, 1)),
        ("30/min", ratelimit.Rate(30, 60)),
        (" 5/S ", ratelimit.Rate(5, 1)),
        ("off", None),
    ],
)
def test_rates_parse(text: str, expected: object) -> None:
    assert ratelimit.parse_rate(text) == expected


@pytest.mark.parametrize("text", ["", "0/s", "10", "10/h", "-1/s", "1e3/s", "\u0665/s"])
def test_a_bad_rate_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a rate"):
        ratelimit.parse_rate(text)
