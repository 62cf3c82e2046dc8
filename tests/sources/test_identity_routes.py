"""Every identity the capture accepts is readable at its percent-encoded path
(docs/api.md, "Conventions"): get, audit record and attempts, on both databases.

Routes end with the identity, so no id can be read as another route: an id
ending in ``/attempts`` is that Source's audit record, never the attempts of the
id before the slash (docs/decisions/0005-trailing-identity-routes.md).
"""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

ODD_IDS = [
    "y/attempts",
    "x/window",
    "window",
    "a\nb",
    "a\r\nb",
    "tab\there",
    "\x01control\x7f",
    "100%",
    "%2F",
    "a?b=c",
    "a#fragment",
    "inner space",
    "\U0001f600 non-BMP",
    "a/b/",
    "/leading",
    "..",
    "../..",
    "caf\u00e9",
    "cafe\u0301",
    "line\u2028separator",
]


def encoded(source_id: str) -> str:
    return quote(source_id, safe="")


def capture(api: ApiClient, scope_id: str, source_id: str, content: str) -> None:
    body = {"scope_id": scope_id, "source_id": source_id, "content": content}
    response = api.post("/v1/sources/content", body)
    assert response.status_code == 202, response.content


@pytest.mark.parametrize("source_id", ODD_IDS)
def test_an_accepted_identity_reads_back_at_its_encoded_path(
    api: ApiClient, scope_id: str, source_id: str
) -> None:
    capture(api, scope_id, source_id, f"content of {source_id!r}")
    path = encoded(source_id)

    record = api.get(f"/v1/scopes/{scope_id}/sources/content/{path}")
    audit = api.get(f"/v1/scopes/{scope_id}/source-audit/content/{path}")
    attempts = api.get(f"/v1/scopes/{scope_id}/source-attempts/content/{path}")

    assert (record.status_code, record.json()["source_id"]) == (200, source_id)
    assert record.json()["content"] == f"content of {source_id!r}"
    assert (audit.status_code, audit.json()["source_id"]) == (200, source_id)
    assert attempts.status_code == 200
    assert [item["outcome"] for item in attempts.json()["items"]] == ["accepted"]


def test_an_id_ending_in_attempts_is_not_the_attempts_of_its_prefix(
    api: ApiClient, scope_id: str
) -> None:
    capture(api, scope_id, "x", "the short one")
    capture(api, scope_id, "x", "the short one")  # a replay: x has two attempts
    capture(api, scope_id, "x/attempts", "the long one")

    audit = api.get(f"/v1/scopes/{scope_id}/source-audit/content/x%2Fattempts")
    unencoded = api.get(f"/v1/scopes/{scope_id}/source-audit/content/x/attempts")
    attempts_of_x = api.get(f"/v1/scopes/{scope_id}/source-attempts/content/x")

    assert audit.json()["source_id"] == "x/attempts"
    assert audit.json()["content"] == "the long one"
    assert unencoded.json() == audit.json()
    assert [a["outcome"] for a in attempts_of_x.json()["items"]] == [
        "accepted",
        "replayed",
    ]


def test_the_old_attempts_suffix_is_an_audit_record_lookup(
    api: ApiClient, scope_id: str
) -> None:
    """``.../source-audit/content/x/attempts`` names the Source ``x/attempts``."""
    capture(api, scope_id, "x", "only x exists")

    response = api.get(f"/v1/scopes/{scope_id}/source-audit/content/x/attempts")

    assert (response.status_code, response.json()["error"]["code"]) == (
        404,
        "source_not_found",
    )
