"""Helpers for envelope tests: paths, writes by owner, and row access."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import pytest

from sessions_app.meta_keys import Owner, owner_of
from sessions_app.models import EnvelopeRevision, SessionEnvelope
from tests.conftest import ApiClient

SESSION = "sess-7"

# The method through which each side writes its keys.
WRITE_METHOD = {Owner.HOST: "PUT", Owner.WORKER: "PATCH"}


def session_path(
    scope_id: str, session_id: str = SESSION, suffix: str = "envelope"
) -> str:
    """The URL of ``suffix`` for a session, with the session id percent-encoded."""
    return f"/v1/scopes/{scope_id}/sessions/{quote(session_id, safe='')}/{suffix}"


def write_key(api: ApiClient, scope_id: str, key: str, value: Any) -> Any:
    """Write one key through the operation its owner uses (PUT host, PATCH worker)."""
    method = WRITE_METHOD[owner_of(key) or Owner.HOST]
    return api.request(method, session_path(scope_id), {"meta": {key: value}})


def envelope_row(scope_id: str, session_id: str = SESSION) -> SessionEnvelope:
    return SessionEnvelope.objects.get(scope_id=scope_id, session_id=session_id)


def revision_versions(scope_id: str, session_id: str = SESSION) -> list[int]:
    return list(
        EnvelopeRevision.objects.filter(
            envelope__scope_id=scope_id, envelope__session_id=session_id
        )
        .order_by("version")
        .values_list("version", flat=True)
    )


@pytest.fixture
def warm_api(api: ApiClient, scope_id: str) -> ApiClient:
    """The admin client after one request, so its token's use is already recorded."""
    api.get(f"/v1/scopes/{scope_id}")
    return api
