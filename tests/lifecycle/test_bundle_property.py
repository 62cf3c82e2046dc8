"""Property: the bundle of any scope survives a restore byte for byte.

Each generated scope is built through the HTTP API, exported, the database is
emptied (``flush``), the bundle restored with ``import_bundle`` and exported
again: the two bundles are the same bytes (both exports given the same
``created_at``, the one field of a bundle that is not the scope's)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lifecycle.bundles.export import Selection, bundle_lines
from powercontext.access.tokens import token_create
from powercontext.principals import Role
from tests.api.test_json_round_trip import CONTENT_VALUES, ENVELOPE_SCALARS, TEXT
from tests.api.test_json_round_trip import JSON_VALUES as METADATA_VALUES
from tests.conftest import ApiClient, create_scope

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = int(os.environ.get("POWERCONTEXT_PROPERTY_EXAMPLES", "15"))
AT = datetime(2026, 7, 1, tzinfo=UTC)
SESSIONS = st.sampled_from(["s1", "s2"])
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("create"), CONTENT_VALUES),
        st.tuples(
            st.just("content"),
            TEXT.filter(str.strip),
            st.dictionaries(TEXT, METADATA_VALUES, max_size=3),
        ),
        st.tuples(st.just("note"), SESSIONS, TEXT.filter(str.strip)),
        st.tuples(st.just("close"), SESSIONS),
        st.tuples(
            st.just("envelope"),
            SESSIONS,
            st.dictionaries(st.sampled_from(["x-a", "x-b"]), ENVELOPE_SCALARS),
        ),
        st.tuples(st.just("notes"), SESSIONS, TEXT),
        st.tuples(st.just("redact"), st.integers(0, 8)),
        st.tuples(st.just("hold"), st.none() | SESSIONS),
    ),
    max_size=10,
)


def _apply(api: ApiClient, scope_id: str, operation: tuple[Any, ...]) -> None:
    scope, kind = f"/v1/scopes/{scope_id}", operation[0]
    count = len(_sources)
    if kind == "create":
        response = api.post(f"{scope}/sources", {"content": operation[1]})
        _sources.append(response.json().get("source_id"))
    elif kind == "content":
        body = {"content": operation[1], "metadata": operation[2]}
        response = api.post(
            "/v1/sources/content",
            {"scope_id": scope_id, "source_id": f"c{count}", **body},
        )
        _sources.append(f"c{count}")
    elif kind == "note":
        response = api.post(
            "/v1/sources/working-notes",
            {
                "scope_id": scope_id,
                "source_id": f"n{count}",
                "content": operation[2],
                "session_id": operation[1],
                "note_kind": "inspection",
            },
        )
        _sources.append(f"n{count}")
    elif kind == "close":
        response = api.post(f"{scope}/sessions/{operation[1]}/close", {})
    elif kind == "envelope":
        envelope = f"{scope}/sessions/{operation[1]}/envelope"
        response = api.put(envelope, {"meta": operation[2]})
    elif kind == "notes":
        notes = f"{scope}/sessions/{operation[1]}/working-notes"
        response = api.put(notes, {"notes": operation[2]})
    elif kind == "redact":
        source_id = _sources[operation[1] % count] if count else "none"
        response = api.post(
            f"{scope}/sources/content/{source_id}/redact", {"reason": "asked"}
        )
    else:
        response = api.post(
            f"{scope}/legal-holds", {"session_id": operation[1], "reason": "case"}
        )
    assert response.status_code < 500, response.content


_sources: list[Any] = []


def _bundle(scope_id: str) -> bytes:
    return b"".join(bundle_lines(selection=Selection(scope_id), created_at=AT))


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(operations=OPERATIONS)
def test_a_restored_scope_exports_the_same_bytes(
    operations: list[tuple[Any, ...]], tmp_path: Path
) -> None:
    call_command("flush", interactive=False, verbosity=0)
    api = ApiClient(token_create(principal="root", grants=[("*", Role.ADMIN)])[1])
    scope_id = create_scope(api, key="property")
    _sources.clear()
    for operation in operations:
        _apply(api, scope_id, operation)
    first = _bundle(scope_id)
    path = tmp_path / "scope.ndjson"
    path.write_bytes(first)

    call_command("flush", interactive=False, verbosity=0)
    call_command("import_bundle", str(path), verbosity=0)

    assert _bundle(scope_id) == first
