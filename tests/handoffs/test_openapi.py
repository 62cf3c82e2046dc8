"""The OpenAPI document lists the evidence and handoff operations."""

from __future__ import annotations

import pytest

from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

OPERATIONS = {
    "/v1/scopes/{scope_id}/evidence/resolve": "resolve_evidence",
    "/v1/handoff/finalize": "finalize_handoff",
    "/v1/handoff/commit": "commit_handoff",
    "/v1/handoff/continue": "continue_handoff",
    "/v1/handoff/hint": "prepare_handoff_hint",
    "/v1/handoff/prepare": "prepare_handoff",
    "/v1/handoff/activate": "activate_handoff",
}


@pytest.fixture(scope="module")
def document() -> dict:
    response = ApiClient().get("/openapi.json")
    assert response.status_code == 200
    return response.json()


@pytest.mark.parametrize(("path", "operation_id"), OPERATIONS.items())
def test_operation_is_documented_with_the_reference_id(
    document: dict, path: str, operation_id: str
) -> None:
    assert list(document["paths"][path]) == ["post"]
    assert document["paths"][path]["post"]["operationId"] == operation_id


@pytest.mark.parametrize(
    ("path", "statuses"),
    [
        ("/v1/handoff/commit", {"200", "404", "409", "422"}),
        ("/v1/handoff/prepare", {"404", "422", "503"}),
        ("/v1/scopes/{scope_id}/evidence/resolve", {"200", "404", "422"}),
    ],
)
def test_operation_documents_its_statuses(
    document: dict, path: str, statuses: set
) -> None:
    assert statuses <= set(document["paths"][path]["post"]["responses"])


def test_citation_is_a_union_discriminated_by_kind(document: dict) -> None:
    citation = document["components"]["schemas"]["HandoffCitation"]

    assert citation["discriminator"]["propertyName"] == "kind"
    assert set(citation["discriminator"]["mapping"]) == {"source", "artifact"}
