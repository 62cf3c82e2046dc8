"""``POST /v1/handoff/finalize`` through HTTP (handoff.md 2)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine

from handoffs.models import HandoffHead, HandoffRevision
from tests.conftest import ApiClient, create_scope, error_of
from tests.handoffs.helpers import (
    capture,
    committed,
    content_of,
    draft,
    finalize,
    hc,
    href,
    note,
    sc,
)

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def frozen() -> Any:
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def cited(api: ApiClient, scope_id: str, frozen: Any) -> str:
    """``c-1`` (plain), ``wn-1`` (note), ``wn-exp`` (note expiring at 13:00)."""
    capture(api, scope_id, "c-1")
    note(api, scope_id, "wn-1")
    note(api, scope_id, "wn-exp", expires_at=NOW + timedelta(hours=1))
    return scope_id


def test_finalize_returns_the_prepared_handoff(api: ApiClient, cited: str) -> None:
    body = draft(
        [sc("c-1"), sc("wn-1"), sc("c-1")],
        [sc("wn-exp")],
        next_action=[sc("wn-1")],
        omissions=({"text": "skipped the lexer", "citation": None},),
    )

    response = finalize(api, cited, body)

    assert response.status_code == 200
    assert response.json() == {
        "generation": None,
        "schema": "powercontext.prepared-handoff.v1",
        "scope_id": cited,
        "base": None,
        "content": content_of(body),
    }
    assert list(response.json()) == [
        "generation",
        "schema",
        "scope_id",
        "base",
        "content",
    ]
    assert HandoffRevision.objects.count() == 0
    assert not HandoffHead.objects.exists()


def test_base_is_the_head_at_finalize_time(api: ApiClient, cited: str) -> None:
    committed(api, cited, draft([sc("c-1")]))
    committed(api, cited, draft([sc("wn-1")]))

    response = finalize(api, cited, draft([sc("c-1")], objective="Third"))

    assert response.json()["base"] == href(2)


@pytest.mark.parametrize(
    "omission",
    [
        pytest.param(sc("ghost"), id="missing-source"),
        pytest.param(hc(5), id="missing-revision"),
    ],
)
def test_omission_citations_are_not_checked(
    api: ApiClient, cited: str, omission: dict
) -> None:
    body = draft([sc("c-1")], omissions=({"text": "not done", "citation": omission},))

    response = finalize(api, cited, body)

    assert response.status_code == 200
    assert response.json()["content"]["omissions"] == body["omissions"]


@pytest.mark.parametrize(
    ("body", "unavailable"),
    [
        pytest.param(draft([sc("c-1"), sc("nope")]), [sc("nope")], id="in-state"),
        pytest.param(
            draft([sc("c-1")], next_action=[sc("nope"), sc("nope")]),
            [sc("nope")],
            id="in-next-action-deduplicated",
        ),
        pytest.param(
            draft([sc("c-1", name="other-type")]),
            [sc("c-1", name="other-type")],
            id="other-source-type",
        ),
        pytest.param(draft([hc(1)]), [hc(1)], id="uncommitted-revision"),
        pytest.param(
            draft([sc("a"), sc("c-1")], [sc("b")], next_action=[sc("a")]),
            [sc("a"), sc("b")],
            id="several",
        ),
    ],
)
def test_unresolvable_citation_is_404(
    api: ApiClient, cited: str, body: dict, unavailable: list
) -> None:
    response = finalize(api, cited, body)

    assert response.status_code == 404
    assert error_of(response)["code"] == "handoff_evidence_not_found"
    assert error_of(response)["details"] == {"unavailable_evidence": unavailable}


def test_source_of_another_scope_is_not_evidence(api: ApiClient, cited: str) -> None:
    other = create_scope(api, key="other")
    capture(api, other, "elsewhere")

    response = finalize(api, cited, draft([sc("elsewhere")]))

    assert response.status_code == 404
    assert error_of(response)["code"] == "handoff_evidence_not_found"


def test_expired_note_is_404_like_a_missing_one(
    api: ApiClient, cited: str, frozen: Any
) -> None:
    before = finalize(api, cited, draft([sc("wn-exp")]))
    frozen.move_to(NOW + timedelta(hours=1))
    after = finalize(api, cited, draft([sc("wn-exp")]))
    missing = finalize(api, cited, draft([sc("never-captured")]))

    assert before.status_code == 200
    assert after.status_code == missing.status_code == 404
    assert error_of(after)["code"] == error_of(missing)["code"]
    assert error_of(after)["message"] == error_of(missing)["message"]


@pytest.mark.parametrize(
    ("revision", "status"), [(1, 200), (2, 404)], ids=["exists", "missing"]
)
def test_handoff_revision_citation_resolves_against_this_scope(
    api: ApiClient, cited: str, revision: int, status: int
) -> None:
    committed(api, cited, draft([sc("c-1")]))
    other = create_scope(api, key="other")

    here = finalize(api, cited, draft([hc(revision)]))
    there = finalize(api, other, draft([hc(1)]))

    assert here.status_code == status
    assert there.status_code == 404


def test_other_artifact_id_does_not_resolve(api: ApiClient, cited: str) -> None:
    committed(api, cited, draft([sc("c-1")]))

    response = finalize(api, cited, draft([hc(1, artifact_id="other")]))

    assert response.status_code == 404
    assert error_of(response)["code"] == "handoff_evidence_not_found"


def test_generation_receipt_cannot_be_verified(api: ApiClient, cited: str) -> None:
    body = {**draft([sc("c-1")]), "generation": {"receipt": "made-up"}}

    response = finalize(api, cited, body)

    assert response.status_code == 422
    assert error_of(response)["code"] == "invalid_handoff_generation"


def test_null_generation_is_accepted(api: ApiClient, cited: str) -> None:
    response = finalize(api, cited, {**draft([sc("c-1")]), "generation": None})

    assert response.status_code == 200


def test_unknown_scope_is_404(api: ApiClient) -> None:
    response = finalize(api, "scp_nope", draft([sc("c-1")]))

    assert response.status_code == 404
    assert error_of(response)["code"] == "scope_not_found"


@pytest.mark.parametrize(
    ("grant", "status"),
    [("viewer", 403), ("contributor", 200), ("admin", 200)],
)
def test_finalize_needs_a_contributor_grant(
    client_for: Callable[..., ApiClient], cited: str, grant: str, status: int
) -> None:
    client = client_for(f"{cited}:{grant}")

    assert finalize(client, cited, draft([sc("c-1")])).status_code == status
