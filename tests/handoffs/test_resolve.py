"""Evidence resolution through HTTP (handoff.md 1, api.md 5.3)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine

from tests.conftest import ApiClient, create_scope, error_of
from tests.handoffs.helpers import capture, note, resolve_url

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
EXPIRES = NOW + timedelta(hours=1)


def digest_of(text: str) -> str:
    """The registry's content digest of a string content (its JSON text)."""
    return "sha256:" + hashlib.sha256(json.dumps(text).encode()).hexdigest()


def ref(source_id: str, digest: str | None = None) -> dict[str, Any]:
    body = {"name": "content", "source_id": source_id}
    return body if digest is None else {**body, "content_digest": digest}


def resolve(api: ApiClient, scope_id: str, purpose: str, *refs: dict) -> Any:
    return api.post(resolve_url(scope_id), {"purpose": purpose, "refs": list(refs)})


@pytest.fixture
def frozen() -> Any:
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def sources(api: ApiClient, scope_id: str, frozen: Any) -> str:
    """``c-1`` (plain), ``wn-1`` (note without expiry), ``wn-exp`` (expires 13:00)."""
    capture(api, scope_id, "c-1", "plain fact")
    note(api, scope_id, "wn-1", content="lasting note")
    note(api, scope_id, "wn-exp", content="short-lived note", expires_at=EXPIRES)
    return scope_id


@pytest.mark.parametrize("purpose", ["handoff", "generation"])
def test_plain_source_resolves_for_both_purposes(
    api: ApiClient, sources: str, purpose: str
) -> None:
    response = resolve(api, sources, purpose, ref("c-1"))
    record = api.get(f"/v1/scopes/{sources}/sources/content/c-1").json()

    assert response.status_code == 200
    assert response.json() == {
        "scope_id": sources,
        "purpose": purpose,
        "resolved_at": "2026-06-01T12:00:00Z",
        "items": [
            {
                "source_ref": {"name": "content", "source_id": "c-1"},
                "status": "available",
                "reason": None,
                "working_note": False,
                "expires_at": None,
                "source": record,
            }
        ],
    }
    assert record["content"] == "plain fact"


@pytest.mark.parametrize(
    ("purpose", "status", "reason", "has_source"),
    [
        ("handoff", "available", None, True),
        ("generation", "unavailable", "not_eligible", False),
    ],
)
def test_working_note_resolves_only_for_handoffs(
    api: ApiClient,
    sources: str,
    purpose: str,
    status: str,
    reason: str | None,
    has_source: bool,
) -> None:
    (item,) = resolve(api, sources, purpose, ref("wn-exp")).json()["items"]

    assert (item["status"], item["reason"]) == (status, reason)
    assert item["working_note"] is True
    assert item["expires_at"] == "2026-06-01T13:00:00Z"
    assert (item["source"] is not None) is has_source


@pytest.mark.parametrize(
    ("offset", "status", "reason"),
    [
        (timedelta(minutes=59, seconds=59), "available", None),
        (timedelta(hours=1), "unavailable", "expired"),  # expires_at <= now
        (timedelta(days=30), "unavailable", "expired"),
    ],
)
def test_note_expires_at_its_instant(
    api: ApiClient,
    sources: str,
    frozen: Any,
    offset: timedelta,
    status: str,
    reason: str | None,
) -> None:
    frozen.move_to(NOW + offset)

    body = resolve(api, sources, "handoff", ref("wn-exp"), ref("wn-1")).json()

    assert [(i["status"], i["reason"]) for i in body["items"]] == [
        (status, reason),
        ("available", None),
    ]
    assert body["resolved_at"] == (NOW + offset).isoformat().replace("+00:00", "Z")


def test_pinned_digest_that_matches_resolves(api: ApiClient, sources: str) -> None:
    (item,) = resolve(
        api, sources, "generation", ref("c-1", digest_of("plain fact"))
    ).json()["items"]

    assert item["status"] == "available"
    assert item["source"]["content_digest"] == digest_of("plain fact")
    assert item["source_ref"] == {"name": "content", "source_id": "c-1"}


@pytest.mark.parametrize("source_id", ["c-1", "wn-1"])
def test_wrong_pinned_digest_never_returns_content(
    api: ApiClient, sources: str, source_id: str
) -> None:
    response = resolve(api, sources, "handoff", ref(source_id, "sha256:" + "0" * 64))

    (item,) = response.json()["items"]
    assert (item["status"], item["reason"], item["source"]) == (
        "unavailable",
        "digest_mismatch",
        None,
    )
    assert b"plain fact" not in response.content
    assert b"lasting note" not in response.content


@pytest.mark.parametrize(
    ("source_id", "digest", "purpose", "reason"),
    [
        pytest.param("nope", "sha256:" + "0" * 64, "generation", "not_found", id="nf"),
        pytest.param(
            "wn-exp", "sha256:" + "0" * 64, "generation", "not_eligible", id="ne>exp"
        ),
        pytest.param(
            "wn-exp", "sha256:" + "0" * 64, "handoff", "expired", id="exp>digest"
        ),
        pytest.param("wn-exp", None, "generation", "not_eligible", id="ne>exp-nodig"),
        pytest.param("wn-1", "sha256:" + "0" * 64, "handoff", "digest_mismatch"),
        pytest.param("c-1", "sha256:" + "0" * 64, "generation", "digest_mismatch"),
    ],
)
def test_first_applicable_reason_wins(
    api: ApiClient,
    sources: str,
    frozen: Any,
    source_id: str,
    digest: str | None,
    purpose: str,
    reason: str,
) -> None:
    frozen.move_to(EXPIRES + timedelta(seconds=1))

    (item,) = resolve(api, sources, purpose, ref(source_id, digest)).json()["items"]

    assert (item["status"], item["reason"], item["source"]) == (
        "unavailable",
        reason,
        None,
    )


def test_not_found_item_has_no_source_facts(api: ApiClient, sources: str) -> None:
    (item,) = resolve(api, sources, "handoff", ref("missing")).json()["items"]

    assert item == {
        "source_ref": {"name": "content", "source_id": "missing"},
        "status": "unavailable",
        "reason": "not_found",
        "working_note": None,
        "expires_at": None,
        "source": None,
    }


def test_items_follow_request_order_with_duplicates(
    api: ApiClient, sources: str
) -> None:
    refs = [
        ref("wn-1"),
        ref("c-1"),
        ref("missing"),
        ref("c-1", "sha256:" + "f" * 64),
        ref("wn-1"),
        ref("c-1", digest_of("plain fact")),
    ]

    items = resolve(api, sources, "generation", *refs).json()["items"]

    assert [(i["source_ref"]["source_id"], i["reason"]) for i in items] == [
        ("wn-1", "not_eligible"),
        ("c-1", None),
        ("missing", "not_found"),
        ("c-1", "digest_mismatch"),
        ("wn-1", "not_eligible"),
        ("c-1", None),
    ]


def test_resolution_never_looks_outside_the_scope(api: ApiClient, sources: str) -> None:
    other = create_scope(api, key="other")
    capture(api, other, "elsewhere", "other scope's fact")

    response = resolve(api, sources, "handoff", ref("elsewhere"), ref("c-1"))
    from_other = resolve(api, other, "handoff", ref("c-1"))

    assert [i["reason"] for i in response.json()["items"]] == ["not_found", None]
    assert b"other scope's fact" not in response.content
    assert from_other.json()["items"][0]["reason"] == "not_found"


def test_source_ids_are_matched_byte_exactly(api: ApiClient, scope_id: str) -> None:
    capture(api, scope_id, "Café/a b%", "exact")

    items = resolve(
        api,
        scope_id,
        "handoff",
        ref("Café/a b%"),
        ref("café/a b%"),
        ref("Cafe\u0301/a b%"),
    ).json()["items"]

    assert [i["reason"] for i in items] == [None, "not_found", "not_found"]


def test_256_refs_resolve_within_the_query_budget(
    api: ApiClient,
    scope_id: str,
    assert_max_statements: Callable[[int], Any],
    django_assert_max_num_queries: Any,
) -> None:
    for index in range(64):
        capture(api, scope_id, f"s{index}", f"fact {index}")
        note(api, scope_id, f"n{index}")
    refs = [
        *(ref(f"s{i}") for i in range(64)),
        *(ref(f"n{i}") for i in range(64)),
        *(ref(f"s{i}", digest_of(f"fact {i}")) for i in range(64)),
        *(ref(f"missing{i}") for i in range(64)),
    ]

    # api.md 5.3: <= 4 statements including authentication, whatever the count.
    with django_assert_max_num_queries(4), assert_max_statements(4):
        response = resolve(api, scope_id, "generation", *refs)

    items = response.json()["items"]
    assert len(items) == 256
    assert [i["reason"] for i in items] == (
        [None] * 64 + ["not_eligible"] * 64 + [None] * 64 + ["not_found"] * 64
    )
    assert [i["source"]["content"] for i in items[:64]] == [
        f"fact {i}" for i in range(64)
    ]


def test_unknown_scope_is_404_for_a_star_grant(api: ApiClient) -> None:
    response = resolve(api, "scp_nope", "handoff", ref("c-1"))

    assert response.status_code == 404
    assert error_of(response)["code"] == "scope_not_found"


@pytest.mark.parametrize(
    ("grants", "status"),
    [
        pytest.param(("{scope}:viewer",), 200, id="viewer"),
        pytest.param(("{scope}:contributor",), 200, id="contributor"),
        pytest.param(("scp_other:admin",), 403, id="other-scope"),
        pytest.param((), 403, id="no-grant"),
    ],
)
def test_resolution_needs_a_viewer_grant_on_the_scope(
    client_for: Callable[..., ApiClient],
    sources: str,
    grants: tuple[str, ...],
    status: int,
) -> None:
    client = client_for(*(g.format(scope=sources) for g in grants))

    response = resolve(client, sources, "handoff", ref("c-1"))

    assert response.status_code == status


@pytest.mark.parametrize("scope", ["scp_nope", "{scope}"])
def test_stranger_gets_403_whether_or_not_the_scope_exists(
    client_for: Callable[..., ApiClient], sources: str, scope: str
) -> None:
    stranger = client_for("scp_mine:admin")

    response = resolve(stranger, scope.format(scope=sources), "handoff", ref("c-1"))

    assert response.status_code == 403
    assert error_of(response)["code"] == "forbidden"


def test_anonymous_caller_is_401(anon: ApiClient, sources: str) -> None:
    assert resolve(anon, sources, "handoff", ref("c-1")).status_code == 401
