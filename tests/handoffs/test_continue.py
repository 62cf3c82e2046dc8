"""``POST /v1/handoff/continue`` through HTTP: selections and evidence checks."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import time_machine

from tests.conftest import ApiClient, create_scope, error_of
from tests.handoffs.helpers import (
    CONTINUE,
    capture,
    committed,
    content_of,
    draft,
    finalize,
    hc,
    href,
    note,
    prepared,
    sc,
    select,
)

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
EXPIRES = NOW + timedelta(hours=1)

# State 1 cites two notes that expire; the next action one of them.
EXPIRING = draft(
    [sc("c-1")],
    [sc("c-2"), sc("wn-exp"), sc("wn-exp2"), sc("wn-exp")],
    [sc("wn-1")],
    next_action=[sc("wn-exp"), sc("c-1")],
)


def resolution(scope_id: str, **fields: Any) -> dict[str, Any]:
    return {
        "trust": "untrusted_history",
        "status": "resolved",
        "scope_id": scope_id,
        **fields,
    }


def check(index: int | None, *unavailable: dict) -> dict[str, Any]:
    return {
        "claim": "state" if index is not None else "next_action",
        "state_index": index,
        "status": "unavailable" if unavailable else "available",
        "unavailable_evidence": list(unavailable),
    }


@pytest.fixture
def frozen() -> Any:
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def cited(api: ApiClient, scope_id: str, frozen: Any) -> str:
    capture(api, scope_id, "c-1")
    capture(api, scope_id, "c-2")
    note(api, scope_id, "wn-1")
    note(api, scope_id, "wn-exp", expires_at=EXPIRES)
    note(api, scope_id, "wn-exp2", expires_at=EXPIRES)
    return scope_id


def test_latest_without_a_commit_is_empty(api: ApiClient, cited: str) -> None:
    response = select(api, CONTINUE, cited, "latest")

    assert response.status_code == 200
    assert response.json() == {
        "trust": "untrusted_history",
        "status": "empty",
        "scope_id": cited,
        "content": None,
        "selection": None,
        "selected_revision": None,
        "current_revision": None,
        "evidence_checks": [],
    }


def test_latest_returns_the_head_with_its_checks(api: ApiClient, cited: str) -> None:
    committed(api, cited, draft([sc("c-1")]))
    committed(api, cited, EXPIRING)

    response = select(api, CONTINUE, cited, "latest", prepared=None, revision=None)

    assert response.json() == resolution(
        cited,
        content=content_of(EXPIRING),
        selection="latest",
        selected_revision=href(2),
        current_revision=href(2),
        evidence_checks=[check(0), check(1), check(2), check(None)],
    )
    assert list(response.json()) == [
        "trust",
        "status",
        "scope_id",
        "content",
        "selection",
        "selected_revision",
        "current_revision",
        "evidence_checks",
    ]


def test_exact_selects_an_older_revision(api: ApiClient, cited: str) -> None:
    first = draft([sc("c-1")], objective="First")
    committed(api, cited, first)
    committed(api, cited, draft([sc("c-2")]))

    response = select(api, CONTINUE, cited, "exact", revision=href(1))

    assert response.json() == resolution(
        cited,
        content=content_of(first),
        selection="exact",
        selected_revision=href(1),
        current_revision=href(2),
        evidence_checks=[check(0)],
    )


@pytest.mark.parametrize(("head", "current"), [(0, None), (1, href(1))])
def test_prepared_needs_no_commit_and_ignores_a_stale_base(
    api: ApiClient, cited: str, head: int, current: dict | None
) -> None:
    for number in range(head):
        committed(api, cited, draft([sc("c-1")], objective=f"rev {number}"))
    value = prepared(cited, draft([sc("c-2"), sc("gone")]), base=99)

    response = select(api, CONTINUE, cited, "prepared", prepared=value)

    assert response.json() == resolution(
        cited,
        content=value["content"],
        selection="prepared",
        selected_revision=None,
        current_revision=current,
        evidence_checks=[check(0, sc("gone"))],
    )


@pytest.mark.parametrize("selection", ["latest", "exact", "prepared"])
def test_expired_evidence_is_reported_per_statement_never_as_an_error(
    api: ApiClient, cited: str, frozen: Any, selection: str
) -> None:
    value = finalize(api, cited, EXPIRING).json()
    committed(api, cited, EXPIRING)
    frozen.move_to(EXPIRES)
    fields = {
        "latest": {},
        "exact": {"revision": href(1)},
        "prepared": {"prepared": value},
    }

    response = select(api, CONTINUE, cited, selection, **fields[selection])

    assert response.status_code == 200
    assert response.json()["status"] == "resolved"
    assert response.json()["evidence_checks"] == [
        check(0),
        check(1, sc("wn-exp"), sc("wn-exp2")),
        check(2),
        check(None, sc("wn-exp")),
    ]


def test_before_expiry_everything_is_available(api: ApiClient, cited: str) -> None:
    committed(api, cited, EXPIRING)

    checks = select(api, CONTINUE, cited, "latest").json()["evidence_checks"]

    assert [c["status"] for c in checks] == ["available"] * 4


def test_artifact_citations_are_checked_against_revisions(
    api: ApiClient, cited: str
) -> None:
    committed(api, cited, draft([sc("c-1")]))
    value = prepared(
        cited, draft([hc(1), hc(9), hc(1, artifact_id="other")], [hc(1)]), base=1
    )

    checks = select(api, CONTINUE, cited, "prepared", prepared=value).json()[
        "evidence_checks"
    ]

    assert checks == [check(0, hc(9), hc(1, artifact_id="other")), check(1)]


def test_omissions_are_not_checked(api: ApiClient, cited: str) -> None:
    value = prepared(
        cited, draft([sc("c-1")], omissions=({"text": "x", "citation": sc("ghost")},))
    )

    checks = select(api, CONTINUE, cited, "prepared", prepared=value).json()[
        "evidence_checks"
    ]

    assert checks == [check(0)]


def test_32_distinct_missing_citations_are_all_listed(
    api: ApiClient, cited: str
) -> None:
    missing = [sc(f"m{i}") for i in range(32)]
    value = prepared(cited, draft(missing))

    (only,) = select(api, CONTINUE, cited, "prepared", prepared=value).json()[
        "evidence_checks"
    ]

    assert only["unavailable_evidence"] == missing


def test_generation_metadata_of_a_prepared_value_is_echoed(
    api: ApiClient, cited: str
) -> None:
    value = prepared(cited, draft([sc("c-1")]))
    value["generation"] = {"receipt": "from another server"}
    value["content"]["generation"] = {
        "scope_id": cited,
        "prompt_key": "handoff.generate",
        "selection": "artifact",
        "artifact": {"family": "prompt", "artifact_id": "p", "revision": 2},
        "definition_version": "1",
        "builtin_version": "1",
        "compiled_digest": "a" * 64,
        "original_draft_digest": "b" * 64,
        "edit_status": "edited",
    }

    response = select(api, CONTINUE, cited, "prepared", prepared=value)

    assert response.status_code == 200
    assert response.json()["content"] == value["content"]


def test_checks_cost_a_constant_number_of_queries(
    api: ApiClient, cited: str, assert_max_statements: Callable[[int], Any]
) -> None:
    committed(api, cited, draft([sc("c-1")]))
    state = [[sc(f"s{i}-{j}") for j in range(32)] for i in range(63)]
    value = prepared(cited, draft(*state, [hc(1)], next_action=[sc("c-1")]), base=1)

    # auth, head, Sources, revisions: whatever the number of citations.
    with assert_max_statements(4):
        response = select(api, CONTINUE, cited, "prepared", prepared=value)

    checks = response.json()["evidence_checks"]
    assert len(checks) == 65
    assert [c["status"] for c in checks] == ["unavailable"] * 63 + ["available"] * 2


@pytest.mark.parametrize(
    "revision",
    [
        pytest.param(href(1), id="none-committed"),
        pytest.param(href(99), id="missing"),
        pytest.param(
            {"family": "handoff", "artifact_id": "zzz", "revision": 1}, id="other-id"
        ),
    ],
)
def test_exact_revision_that_does_not_exist_is_404(
    api: ApiClient, cited: str, revision: dict
) -> None:
    response = select(api, CONTINUE, cited, "exact", revision=revision)

    assert response.status_code == 404
    assert error_of(response)["code"] == "artifact_not_found"


def test_exact_revision_of_another_scope_is_404(api: ApiClient, cited: str) -> None:
    committed(api, cited, draft([sc("c-1")]))
    other = create_scope(api, key="other")

    response = select(api, CONTINUE, other, "exact", revision=href(1))

    assert response.status_code == 404


@pytest.mark.parametrize(
    ("selection", "fields", "loc"),
    [
        pytest.param(
            "latest", lambda p: {"revision": href(1)}, ["body", "revision"], id="l+r"
        ),
        pytest.param(
            "latest", lambda p: {"prepared": p}, ["body", "prepared"], id="l+p"
        ),
        pytest.param("prepared", lambda p: {}, ["body", "prepared"], id="p-missing"),
        pytest.param(
            "prepared", lambda p: {"prepared": None}, ["body", "prepared"], id="p-null"
        ),
        pytest.param(
            "prepared",
            lambda p: {"prepared": p, "revision": href(1)},
            ["body", "revision"],
            id="p+r",
        ),
        pytest.param("exact", lambda p: {}, ["body", "revision"], id="e-missing"),
        pytest.param(
            "exact",
            lambda p: {"revision": href(1), "prepared": p},
            ["body", "prepared"],
            id="e+p",
        ),
    ],
)
def test_selection_needs_exactly_its_value(
    api: ApiClient,
    cited: str,
    selection: str,
    fields: Callable[[dict], dict],
    loc: list,
) -> None:
    value = prepared(cited, draft([sc("c-1")]))

    response = select(api, CONTINUE, cited, selection, **fields(value))

    assert response.status_code == 422
    assert [e["loc"] for e in error_of(response)["details"]["errors"]] == [loc]


@pytest.mark.parametrize(
    ("fields", "loc"),
    [
        pytest.param(
            {
                "selection": "exact",
                "revision": {
                    "family": "skill",
                    "artifact_id": "handoff",
                    "revision": 1,
                },
            },
            ["body", "revision", "family"],
            id="exact-other-family",
        ),
        pytest.param(
            {"selection": "newest"}, ["body", "selection"], id="unknown-selection"
        ),
    ],
)
def test_invalid_selection_values_are_422(
    api: ApiClient, cited: str, fields: dict, loc: list
) -> None:
    response = api.post(CONTINUE, {"scope_id": cited, **fields})

    assert response.status_code == 422
    assert [e["loc"] for e in error_of(response)["details"]["errors"]] == [loc]


def test_prepared_value_of_another_scope_is_422(api: ApiClient, cited: str) -> None:
    other = create_scope(api, key="other")
    value = prepared(other, draft([sc("c-1")]))

    response = select(api, CONTINUE, cited, "prepared", prepared=value)

    assert response.status_code == 422
    assert error_of(response)["details"]["errors"][0]["loc"] == [
        "body",
        "prepared",
        "scope_id",
    ]


def test_unknown_scope_is_404(api: ApiClient) -> None:
    response = select(api, CONTINUE, "scp_nope", "latest")

    assert response.status_code == 404
    assert error_of(response)["code"] == "scope_not_found"


@pytest.mark.parametrize(
    ("grants", "status"),
    [(("{s}:viewer",), 200), (("scp_other:admin",), 403), ((), 403)],
)
def test_continue_needs_a_viewer_grant(
    client_for: Callable[..., ApiClient], cited: str, grants: tuple, status: int
) -> None:
    client = client_for(*(grant.format(s=cited) for grant in grants))

    assert select(client, CONTINUE, cited, "latest").status_code == status
