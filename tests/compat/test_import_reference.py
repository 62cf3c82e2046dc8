"""Moving over from the reference (spec/access.md 2), end to end.

The reference server captures a mix of Sources through its own client; its
database is imported here; then the same client replays every original request
against this service and must get the same answers - receipts with their
positions, 409 where the reference said 409, the same ``get_source`` and
``list_sources`` - and new captures continue the positions without a gap.
"""

from __future__ import annotations

import json
import subprocess
import time
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command

from sources.models import ContentSource, SourceJournalHead
from tests.compat.conftest import DRIVER, REF_PYTHON
from tests.compat.reference_server import STATIC_TOKEN, reference_server

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.compat,
    pytest.mark.django_db(transaction=True),
]

# seconds: a note that has expired by the time it is replayed, and is still live
# when the reference server receives it (the steps before it take several seconds
# on a loaded machine, so 5 s was too tight)
EXPIRES_SOON = 15


def drive(url: str, steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run ``steps`` with the reference client against ``url`` (static token)."""
    completed = subprocess.run(
        [str(REF_PYTHON), str(DRIVER), url, STATIC_TOKEN],
        input=json.dumps(steps),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd="/",
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def _when(seconds: float) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).isoformat()


def _steps() -> list[dict[str, Any]]:
    """Two scopes (one the other's parent), content and notes, replays, conflicts."""
    parent, child = "$0.scope_id", "$1.scope_id"

    def content(scope: str, source_id: str, text: str, **metadata: Any) -> dict:
        request = {"scope_id": scope, "source_id": source_id, "content": text}
        if metadata:
            request["metadata"] = metadata
        return {"op": "capture_content_source", "request": request}

    def note(scope: str, source_id: str, expires_at: str | None, **fields: Any) -> dict:
        request = {
            "scope_id": scope,
            "source_id": source_id,
            "content": f"note {source_id}",
            "session_id": fields.get("session_id", "sess-1"),
            "note_kind": fields.get("note_kind", "inspection"),
        }
        if expires_at is not None:
            request["expires_at"] = expires_at
        return {"op": "capture_working_note", "request": request}

    return [
        {
            "op": "create_scope",
            "request": {
                "title": "Parent",
                "summary": "The parent scope",
                "idempotency_key": "import-parent",
                "external_references": [{"kind": "repo", "value": "acme/api"}],
            },
        },
        {
            "op": "create_scope",
            "request": {
                "title": "Child",
                "summary": "A child scope",
                "idempotency_key": "import-child",
                "parent_scope_id": parent,
                "context_references": [parent],
            },
        },
        content(parent, "plain", "hello"),
        content(parent, "with/meta data", "x", b=1.5, a=[1, 2], s="é", n=None),
        note(parent, "note-expiring", _when(EXPIRES_SOON)),
        note(parent, "note-later", _when(86_400), note_kind="validation"),
        note(child, "note-forever", None, session_id="sess-2", note_kind="unresolved"),
        content(child, "plain", "the child's own"),
        content(parent, "plain", "hello"),  # a replay
        content(parent, "plain", "changed"),  # a conflict
        note(child, "note-forever", _when(60)),  # a conflict (other expiry)
        content(child, "with/meta data", "x", b=2),
    ]


CREATED = {
    "op": "create_source",
    "args": ["$1.scope_id"],
    "request": {"content": {"z": 1}},
}


def _reads(parent: str, child: str, created: str) -> list[dict[str, Any]]:
    """Every read compared, with the ids spelled out (each run numbers its own)."""

    def source(scope: str, source_id: str) -> dict[str, Any]:
        return {"op": "get_source", "args": [scope, "content", source_id]}

    return [
        {"op": "get_scope", "args": [parent]},
        {"op": "get_scope", "args": [child]},
        source(parent, "plain"),
        source(parent, "with/meta data"),
        source(parent, "note-expiring"),
        source(parent, "note-later"),
        source(child, "note-forever"),
        source(child, created),
        source(child, "never-captured"),
        {"op": "list_sources", "args": [parent]},
        {"op": "list_sources", "args": [child], "request": {"limit": 2}},
        {
            "op": "list_sources",
            "args": [child],
            "request": {"limit": 2, "cursor": "$10.next_cursor"},
        },
    ]


def _comparable(result: dict[str, Any]) -> Any:
    """A result without what is each server's own: request ids and cursors."""
    if "error" in result:
        error = result["error"]
        return {"error": (error["type"], error["status_code"], error["code"])}
    answer = result["ok"]
    if isinstance(answer, dict) and "next_cursor" in answer:
        return {**answer, "next_cursor": answer["next_cursor"] is not None}
    return answer


def _statuses(results: list[dict[str, Any]]) -> list[int | None]:
    return [result.get("error", {}).get("status_code") for result in results]


def test_the_reference_client_cannot_tell_after_an_import(
    tmp_path: Path, live_server: Any, settings: Any
) -> None:
    with reference_server(tmp_path) as reference:
        expired_at = time.monotonic() + EXPIRES_SOON
        steps = _steps()
        original = drive(reference.url, [*steps, CREATED])
        parent, child = original[0]["ok"]["scope_id"], original[1]["ok"]["scope_id"]
        reads = _reads(parent, child, original[-1]["ok"]["source_id"])
        time.sleep(max(0.0, expired_at - time.monotonic()) + 0.2)
        reference_reads = drive(reference.url, reads)
    out = StringIO()
    call_command(
        "import_powercontext", str(reference.database), "--no-progress", stdout=out
    )
    settings.POWERCONTEXT_SERVER_AUTH_TOKEN = STATIC_TOKEN

    # Every request replayed but ``create_source``, which assigns a new id each time
    # (on either server); the Source it created is read back below.
    replayed = drive(live_server.url, steps)
    our_reads = drive(live_server.url, reads)
    after = drive(
        live_server.url,
        [
            {
                "op": "capture_content_source",
                "request": {"scope_id": scope, "source_id": "new", "content": "n"},
            }
            for scope in (parent, child)
        ],
    )

    assert _statuses(original) == [None] * 9 + [409, 409] + [None] * 2, original
    assert "Verified 8 Source(s)" in out.getvalue(), out.getvalue()
    assert list(map(_comparable, replayed)) == list(
        map(_comparable, original[: len(steps)])
    )
    assert list(map(_comparable, our_reads)) == list(map(_comparable, reference_reads))
    assert [result["ok"]["position"] for result in after] == [5, 5]
    for scope in (parent, child):
        positions = ContentSource.objects.filter(scope_id=scope).values_list(
            "position", flat=True
        )
        head = SourceJournalHead.objects.get(scope_id=scope).last_position
        assert sorted(positions) == list(range(1, head + 1))
