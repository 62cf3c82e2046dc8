"""A handoff is held to the cap of one Source (``POWERCONTEXT_MAX_SOURCE_BYTES``,
canonical JSON), so that no finalize, commit or continue answer carrying it can
pass the response budget (spec/limits.md 2)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import ApiClient, error_of
from tests.handoffs.helpers import (
    CONTINUE,
    capture,
    commit,
    committed,
    draft,
    finalize,
    prepared,
    sc,
    select,
)

pytestmark = pytest.mark.django_db

CAP = 4096


@pytest.fixture
def small_cap(settings: Any) -> None:
    settings.POWERCONTEXT_MAX_SOURCE_BYTES = CAP


@pytest.fixture
def cited(api: ApiClient, scope_id: str) -> str:
    capture(api, scope_id, "c-1", "a fact")
    return scope_id


def large(objective_bytes: int) -> dict[str, Any]:
    return draft([sc("c-1")], objective="o" * objective_bytes)


def assert_too_large(response: Any, field: str) -> None:
    assert response.status_code == 422, response.content
    error = error_of(response)
    assert error["details"]["field"] == field
    assert error["details"]["reason"] == "too_large"
    assert error["details"]["max_bytes"] == CAP
    assert error["details"]["bytes"] > CAP


def test_finalize_refuses_a_draft_over_the_cap(
    api: ApiClient, cited: str, small_cap: None
) -> None:
    assert finalize(api, cited, large(3000)).status_code == 200
    assert_too_large(finalize(api, cited, large(CAP)), "draft")


def test_commit_refuses_a_handoff_over_the_cap(
    api: ApiClient, cited: str, small_cap: None
) -> None:
    assert_too_large(commit(api, cited, prepared(cited, large(CAP))), "handoff")


def test_continue_refuses_a_prepared_handoff_over_the_cap(
    api: ApiClient, cited: str, small_cap: None
) -> None:
    response = select(
        api, CONTINUE, cited, "prepared", prepared=prepared(cited, large(CAP))
    )

    assert_too_large(response, "prepared")


def test_a_handoff_at_the_cap_is_committed_and_continued(
    api: ApiClient, cited: str, small_cap: None
) -> None:
    body = large(3000)
    committed(api, cited, body)

    response = select(api, CONTINUE, cited, "latest")

    assert response.status_code == 200
    assert response.json()["content"]["objective"] == body["objective"]
