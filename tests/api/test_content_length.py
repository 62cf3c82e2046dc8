"""An answer held in memory says its length; a streamed one does not.

``RequestIdMiddleware`` sets ``Content-Length`` to the body's size in bytes on
every answer that is not streamed, errors included, so a server need not frame it
in chunks. RFC 9110 8.6: none on a ``204`` (nor a ``304``), and a streamed bundle
keeps its chunks: its length is not known before its last record.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import ApiClient
from tests.sessions_app.conftest import SESSION, session_path

pytestmark = pytest.mark.django_db


def assert_length_said(response: Any) -> None:
    assert not response.streaming
    assert response.content  # a length of 0 would prove nothing
    assert response["Content-Length"] == str(len(response.content))


def test_a_capture_says_its_length_in_bytes(api: ApiClient, scope_id: str) -> None:
    response = api.post(
        "/v1/sources/working-notes",
        {
            "scope_id": scope_id,
            "source_id": "caf\u00e9-\U0001f680",  # echoed: more bytes than characters
            "content": "A note.",
            "session_id": "sess-1",
            "note_kind": "inspection",
        },
    )

    assert response.status_code == 202
    assert_length_said(response)
    assert len(response.content) > len(response.content.decode())


@pytest.mark.parametrize(
    ("method", "path", "authenticated", "status"),
    [
        ("GET", "/v1/scopes", True, 200),
        ("GET", "/v1/scopes", False, 401),
        ("GET", "/v1/nope", True, 404),  # outside DRF
        ("DELETE", "/v1/scopes", True, 405),
        ("GET", "/health/live", False, 200),
        ("GET", "/openapi.json", False, 200),
    ],
)
def test_answers_and_errors_say_their_length(
    api: ApiClient, method: str, path: str, authenticated: bool, status: int
) -> None:
    client = api if authenticated else ApiClient()

    response = client.request(method, path)

    assert response.status_code == status
    assert_length_said(response)


def test_a_refused_body_says_its_length(api: ApiClient) -> None:
    response = api.post("/v1/scopes", {"title": 7})

    assert response.status_code == 422
    assert_length_said(response)


def test_a_text_answer_says_its_length(api: ApiClient, scope_id: str) -> None:
    api.put(
        session_path(scope_id, SESSION, "working-notes"), {"notes": "Caf\u00e9 notes."}
    )

    response = api.get(session_path(scope_id, SESSION, "working-notes/fold"))

    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert_length_said(response)


def test_a_204_says_no_length(api: ApiClient, scope_id: str) -> None:
    api.put(session_path(scope_id), {"meta": {"personaId": "p"}})

    response = api.get(session_path(scope_id, SESSION, "working-notes/fold"))

    assert response.status_code == 204
    assert not response.has_header("Content-Length")


def test_a_streamed_bundle_keeps_its_chunks(api: ApiClient, scope_id: str) -> None:
    # The client itself: ApiClient reads a streamed answer into memory.
    response = api.client.get(
        f"/v1/scopes/{scope_id}/export",
        headers={"Authorization": f"Bearer {api.token}"},
    )

    assert response.status_code == 200
    assert response.streaming
    assert not response.has_header("Content-Length")
    assert b"".join(response.streaming_content)
