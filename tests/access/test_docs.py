"""The token operations are documented: the error catalogue and OpenAPI."""

from __future__ import annotations

from pathlib import Path

import pytest

from powercontext.access import exceptions
from tests.conftest import ApiClient

DOCS = Path(__file__).resolve().parents[2] / "docs"
OPERATIONS = [
    "mint_token",
    "list_tokens",
    "get_token",
    "revoke_token",
    "rotate_token",
    "set_token_expiry",
    "add_token_grant",
    "remove_token_grant",
]


@pytest.mark.parametrize(
    "error",
    [
        exceptions.TokenNotFound,
        exceptions.GrantNotFound,
        exceptions.TokenRevoked,
        exceptions.PrincipalNotYours,
    ],
)
def test_the_error_catalogue_lists_the_access_codes(error: type) -> None:
    catalogue = (
        (DOCS / "api.md").read_text().split("## Errors", 1)[1].split("\n## ", 1)[0]
    )

    assert f"| {error.status_code} | `{error.code}` |" in catalogue


@pytest.mark.django_db
def test_openapi_and_api_md_name_every_token_operation(anon: ApiClient) -> None:
    document = anon.get("/openapi.json").json()
    operation_ids = {
        operation["operationId"]
        for path in document["paths"].values()
        for operation in path.values()
        if isinstance(operation, dict) and "operationId" in operation
    }
    api_md = (DOCS / "api.md").read_text()

    assert set(OPERATIONS) <= operation_ids
    assert all(f"` - `{name}`" in api_md for name in OPERATIONS)
