"""``prepare`` and ``activate``: no model here, so 503 after the usual checks."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from tests.conftest import ApiClient, error_of
from tests.handoffs.helpers import ACTIVATE, PREPARE, capture, note, sc

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


def boundary(source_id: str) -> dict[str, str]:
    return {"name": "content", "source_id": source_id}


@pytest.fixture
def cited(api: ApiClient, scope_id: str) -> str:
    capture(api, scope_id, "c-1")
    return scope_id


@pytest.mark.parametrize(
    ("url", "body"),
    [
        pytest.param(
            PREPARE, {"objective": "o", "evidence": [sc("c-1")]}, id="prepare"
        ),
        pytest.param(
            PREPARE,
            {"objective": "o", "evidence": [sc("missing")]},
            id="prepare-missing-evidence",
        ),
        pytest.param(
            PREPARE,
            {
                "objective": "o",
                "evidence": [sc("c-1")],
                "rollover_reasons": ["delegation", "manual_checkpoint"],
                "max_bytes": 512,
            },
            id="prepare-all-fields",
        ),
        pytest.param(
            ACTIVATE,
            {"boundary_source": boundary("c-1"), "objective": "o"},
            id="activate",
        ),
        pytest.param(
            ACTIVATE,
            {
                "boundary_source": boundary("c-1"),
                "objective": "o",
                "evidence": [sc("missing")],
                "max_bytes": 32768,
            },
            id="activate-all-fields",
        ),
    ],
)
def test_generation_is_unavailable(
    api: ApiClient, cited: str, url: str, body: dict
) -> None:
    response = api.post(url, {"scope_id": cited, **body})

    assert response.status_code == 503
    assert error_of(response)["code"] == "handoff_generation_unavailable"
    assert error_of(response)["details"] is None


def test_activate_resolves_its_boundary_first(api: ApiClient, cited: str) -> None:
    response = api.post(
        ACTIVATE,
        {"scope_id": cited, "boundary_source": boundary("missing"), "objective": "o"},
    )

    assert response.status_code == 404
    assert error_of(response)["code"] == "handoff_evidence_not_found"


def test_activate_refuses_an_expired_boundary(api: ApiClient, cited: str) -> None:
    with time_machine.travel(NOW, tick=False) as traveller:
        note(api, cited, "wn-exp", expires_at=NOW + timedelta(seconds=5))
        traveller.move_to(NOW + timedelta(seconds=5))
        response = api.post(
            ACTIVATE,
            {
                "scope_id": cited,
                "boundary_source": boundary("wn-exp"),
                "objective": "o",
            },
        )

    assert response.status_code == 404


@pytest.mark.parametrize(
    ("url", "body"),
    [
        (PREPARE, {"objective": "o", "evidence": [sc("c-1")]}),
        (ACTIVATE, {"boundary_source": boundary("c-1"), "objective": "o"}),
    ],
)
def test_unknown_scope_is_404(api: ApiClient, url: str, body: dict) -> None:
    response = api.post(url, {"scope_id": "scp_nope", **body})

    assert response.status_code == 404
    assert error_of(response)["code"] == "scope_not_found"


@pytest.mark.parametrize(
    ("url", "body", "error_type", "loc"),
    [
        (PREPARE, {"objective": "o", "evidence": []}, "too_short", ["evidence"]),
        (PREPARE, {"objective": "o"}, "missing", ["evidence"]),
        (
            PREPARE,
            {"objective": "o", "evidence": [sc("c-1")] * 33},
            "too_long",
            ["evidence"],
        ),
        (
            PREPARE,
            {"objective": " ", "evidence": [sc("c-1")]},
            "string_pattern_mismatch",
            ["objective"],
        ),
        (
            PREPARE,
            {"objective": "o", "evidence": [sc("c-1")], "max_bytes": 511},
            "greater_than_equal",
            ["max_bytes"],
        ),
        (
            PREPARE,
            {
                "objective": "o",
                "evidence": [sc("c-1")],
                "rollover_reasons": ["delegation", "delegation"],
            },
            "unique_items",
            ["rollover_reasons"],
        ),
        (
            PREPARE,
            {"objective": "o", "evidence": [sc("c-1")], "rollover_reasons": ["bored"]},
            "enum",
            ["rollover_reasons", 0],
        ),
        (ACTIVATE, {"objective": "o"}, "missing", ["boundary_source"]),
        (
            ACTIVATE,
            {"boundary_source": {"name": "content"}, "objective": "o"},
            "missing",
            ["boundary_source", "source_id"],
        ),
        (
            ACTIVATE,
            {"boundary_source": boundary("c-1"), "objective": "o", "max_bytes": 32769},
            "less_than_equal",
            ["max_bytes"],
        ),
    ],
)
def test_schema_errors_come_before_the_503(
    api: ApiClient, cited: str, url: str, body: dict, error_type: str, loc: list
) -> None:
    response = api.post(url, {"scope_id": cited, **body})

    assert response.status_code == 422
    assert [(e["type"], e["loc"]) for e in error_of(response)["details"]["errors"]] == [
        (error_type, ["body", *loc])
    ]


@pytest.mark.parametrize(
    ("url", "body"),
    [
        (PREPARE, {"objective": "o", "evidence": [sc("c-1")]}),
        (ACTIVATE, {"boundary_source": boundary("c-1"), "objective": "o"}),
    ],
)
def test_generation_needs_a_contributor_grant(
    client_for: Callable[..., ApiClient], cited: str, url: str, body: dict
) -> None:
    viewer = client_for(f"{cited}:viewer")

    response = viewer.post(url, {"scope_id": cited, **body})

    assert response.status_code == 403


def test_generation_needs_authentication(anon: ApiClient, cited: str) -> None:
    response = anon.post(
        PREPARE, {"scope_id": cited, "objective": "o", "evidence": [sc("c-1")]}
    )

    assert response.status_code == 401
