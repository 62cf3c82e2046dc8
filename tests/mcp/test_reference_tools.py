"""Our shared tools against the reference's own ``tools/list``.

The reference PowerContext 1.4.1 server is started here (its own environment:
``POWERCONTEXT_REFERENCE_VENV``, else ``.venv-bench-ref`` as ``make test`` and
``make bench`` install it, else ``/tmp/pcvenv`` as
../shared/tools/powercontext-reference.sh does), its tools are listed with the official client, and every tool both offer
must agree on names, argument names, required arguments, JSON types and
annotations. An agent configured for the reference then calls ours the same way.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client.session import ClientSession

from powercontext.mcp_server.tools import TOOLS
from tests.mcp.client import session
from tests.robustness.processes import ROOT, free_port, tail, wait_until

pytestmark = pytest.mark.compat

SHARED = {
    "create_scope",
    "get_scope",
    "list_scopes",
    "capture_content_source",
    "capture_working_note",
    "finalize_handoff",
    "commit_handoff",
    "continue_handoff",
    "prepare_handoff_hint",
    "activate_handoff",
}


def _reference_program() -> Path:
    candidates = [
        Path(os.environ.get("POWERCONTEXT_REFERENCE_VENV", "/nonexistent")),
        ROOT / ".venv-bench-ref",
        Path("/tmp/pcvenv"),
    ]
    for venv in candidates:
        if (venv / "bin" / "powercontext").exists():
            return venv / "bin" / "powercontext"
    pytest.fail(
        "the reference server is not installed: `make .venv-bench-ref/.installed` "
        "(`make test` does it), or point "
        "POWERCONTEXT_REFERENCE_VENV at a venv with 'powercontext[server,cli]==1.4.1'"
    )


@pytest.fixture(scope="module")
def reference_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The reference server, access mode disabled, its SQLite in a temp dir."""
    home = tmp_path_factory.mktemp("reference")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = home / "server.log"
    program = str(_reference_program())
    arguments = ["server", "run", "--no-env-file", "--host", "127.0.0.1"]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [program, *arguments, "--port", str(port)],
            cwd=home,
            env={
                "PATH": "/usr/bin:/bin",
                "HOME": str(home),
                "LANG": "C.UTF-8",
                "POWERCONTEXT_HOME": str(home),
                "POWERCONTEXT_SERVER_ACCESS_MODE": "disabled",
                "POWERCONTEXT_SERVER_METRICS_ENABLED": "false",
            },
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def live() -> bool:
            if process.poll() is not None:
                pytest.fail(f"the reference server exited:\n{tail(log)}")
            try:
                return httpx.get(f"{url}/health/live", timeout=2).status_code == 200
            except httpx.TransportError:
                return False

        wait_until(live, timeout=90, what=f"the reference server on {url}")
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def _listed(url: str, token: str | None) -> dict[str, dict[str, Any]]:
    async def steps(mcp: ClientSession) -> Any:
        return await mcp.list_tools()

    tools = session(url, token, steps).tools
    return {t.name: t.model_dump(by_alias=True, exclude_none=True) for t in tools}


def _json_types(schema: dict[str, Any], defs: dict[str, Any]) -> set[str]:
    """The JSON types a value may have, ``null`` left out (an optional argument
    may be omitted in either)."""
    if "$ref" in schema:
        return _json_types(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    if "anyOf" in schema or "oneOf" in schema:
        branches = schema.get("anyOf", schema.get("oneOf"))
        return set().union(*(_json_types(branch, defs) for branch in branches))
    declared = schema.get("type")
    if declared is None and "enum" in schema:
        return {"string"} if all(isinstance(v, str) for v in schema["enum"]) else {"?"}
    kinds = {declared} if isinstance(declared, str) else set(declared or ())
    return kinds - {"null"}


def _members(schema: dict[str, Any], defs: dict[str, Any]) -> set[str]:
    """The member names of an object argument (of each object it may be)."""
    if "$ref" in schema:
        return _members(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    branches = schema.get("anyOf", schema.get("oneOf", []))
    found = set(schema.get("properties", {}))
    return found.union(*(_members(branch, defs) for branch in branches))


def _signature(tool: dict[str, Any]) -> dict[str, Any]:
    schema = tool["inputSchema"]
    defs = schema.get("$defs", {})
    return {
        "arguments": {
            name: (_json_types(argument, defs), _members(argument, defs))
            for name, argument in schema["properties"].items()
        },
        "required": set(schema.get("required", ())),
        "annotations": tool.get("annotations"),
    }


@pytest.fixture(scope="module")
def theirs(reference_url: str) -> dict[str, dict[str, Any]]:
    return _listed(f"{reference_url}", None)


def test_the_shared_tools_exist_on_both(theirs: dict[str, dict[str, Any]]) -> None:
    ours = {tool.name for tool in TOOLS}

    assert set(theirs) >= SHARED
    assert ours >= SHARED


@pytest.mark.parametrize("name", sorted(SHARED))
def test_a_shared_tool_takes_the_same_arguments(
    theirs: dict[str, dict[str, Any]], name: str
) -> None:
    [ours] = [
        t.definition().model_dump(by_alias=True, exclude_none=True)
        for t in TOOLS
        if t.name == name
    ]

    assert _signature(ours) == _signature(theirs[name])
