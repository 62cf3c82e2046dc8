"""docs/hosts.md's Python example, run as written against a live server.

The example is taken from the page (the fenced block after
``<!-- example: python-mcp -->``), its placeholder URL and token are replaced by
the live server's, and its function is called: a change to the page that breaks
it fails here. The TypeScript and JSON examples are run by
``clients/typescript/test/hosts.test.ts``.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Any

import anyio
import httpx

from tests.mcp.conftest import LiveService

HOSTS = Path(__file__).resolve().parents[2] / "docs" / "hosts.md"


def example(name: str) -> str:
    """The fenced block that follows ``<!-- example: name -->`` in docs/hosts.md."""
    pattern = rf"<!-- example: {re.escape(name)} -->\n```\w+\n(.*?)\n```"
    found = re.search(pattern, HOSTS.read_text(), re.DOTALL)
    assert found is not None, f"docs/hosts.md has no example {name!r}"
    return found.group(1)


def live_example(name: str, live: LiveService) -> dict[str, Any]:
    source = example(name)
    for placeholder in ('"https://context.example.com/mcp"', '"pct_..."'):
        assert placeholder in source, f"{placeholder} missing from example {name!r}"
    source = source.replace(
        '"https://context.example.com/mcp"', repr(f"{live.url}/mcp")
    ).replace('"pct_..."', repr(live.token))
    namespace: dict[str, Any] = {"__name__": "hosts_example"}
    exec(compile(source, f"docs/hosts.md:{name}", "exec"), namespace)
    return namespace


def test_the_python_sdk_example_writes_notes_and_returns_the_fold(
    live: LiveService,
) -> None:
    remember = live_example("python-mcp", live)["remember"]
    headers = {"Authorization": f"Bearer {live.token}"}
    scope_id = httpx.post(
        f"{live.url}/v1/scopes",
        json={
            "title": "hosts.md",
            "summary": "the Python example",
            "idempotency_key": secrets.token_hex(8),
        },
        headers=headers,
    ).json()["scope_id"]
    note = "the migration is verified \N{CHECK MARK}"

    block = anyio.run(remember, scope_id, "chat-1", note)

    fold = httpx.get(
        f"{live.url}/v1/scopes/{scope_id}/sessions/chat-1/working-notes/fold",
        headers=headers,
    )
    assert fold.status_code == 200
    assert block == fold.text
    assert block.endswith(f"\n---\n{note}")
