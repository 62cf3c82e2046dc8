"""``verify_bundle`` and the checks ``import_bundle`` runs first: a bundle changed
in any way is refused, naming its first bad line; session bundles and the export
route's errors."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError

from lifecycle.bundles.format import Chain
from sources.models import Scope
from tests.conftest import ApiClient, error_of
from tests.lifecycle.bundle_world import T0, World, world_build

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(api: ApiClient) -> World:
    with time_machine.travel(T0, tick=False):
        return world_build(api)


@pytest.fixture
def bundle(api: ApiClient, world: World) -> bytes:
    response = api.get(f"/v1/scopes/{world.scope_id}/export")
    assert response.status_code == 200, response.content
    return response.content


def _verify(path: Path) -> str:
    """What verify_bundle says of ``path``: its error, or its summary."""
    out = io.StringIO()
    try:
        call_command("verify_bundle", str(path), stdout=out, stderr=io.StringIO())
    except CommandError as refused:
        return str(refused)
    return out.getvalue()


def _flipped(lines: list[bytes]) -> list[bytes]:
    line = bytearray(lines[2])
    line[len(line) // 2] ^= 0x01
    return [*lines[:2], bytes(line), *lines[3:]]


def _dropped(lines: list[bytes]) -> list[bytes]:
    return [*lines[:3], *lines[4:]]


def _swapped(lines: list[bytes]) -> list[bytes]:
    return [*lines[:2], lines[3], lines[2], *lines[4:]]


def _truncated(lines: list[bytes]) -> list[bytes]:
    return [*lines[:-2], lines[-2][:10]]


def _cut_at_a_line(lines: list[bytes]) -> list[bytes]:
    return lines[:-1]


def _rechained_edit(lines: list[bytes]) -> list[bytes]:
    """A Source's content edited and every chain recomputed: only the content
    digest can tell."""
    chain, out = Chain(), []
    for raw in lines[:-1]:
        record = json.loads(raw)["record"]
        if record.get("source_id") == "c-2":
            record["content"] = json.dumps("edited text")
        out.append(chain.line(record))
    out.append(chain.trailer())
    return out


@pytest.mark.parametrize(
    ("change", "first_bad"),
    [
        (_flipped, 3),
        (_dropped, 4),
        (_swapped, 3),
        (_truncated, None),  # the last line, cut short: named by number below
        (_cut_at_a_line, None),
        (_rechained_edit, 4),
    ],
)
def test_verify_names_the_first_bad_line(
    bundle: bytes, tmp_path: Path, change: Callable[..., list[bytes]], first_bad: Any
) -> None:
    lines = bundle.splitlines(keepends=True)
    changed = change(lines)
    path = tmp_path / "changed.ndjson"
    path.write_bytes(b"".join(changed))

    said = _verify(path)

    expected = len(changed) if first_bad is None else first_bad
    if change is _cut_at_a_line:
        expected = len(changed) + 1  # the trailer is missing after the last line
    assert f"the first bad line is line {expected}." in said


def test_verify_accepts_the_bundle_as_exported(bundle: bytes, tmp_path: Path) -> None:
    path = tmp_path / "scope.ndjson"
    path.write_bytes(bundle)
    trailer = json.loads(bundle.splitlines()[-1])

    said = _verify(path)

    assert f"chained digest {trailer['chain']}" in said
    assert f"{len(bundle.splitlines())} lines" in said


def test_a_changed_bundle_is_refused_before_anything_is_written(
    bundle: bytes, tmp_path: Path, world: World
) -> None:
    path = tmp_path / "changed.ndjson"
    path.write_bytes(b"".join(_swapped(bundle.splitlines(keepends=True))))
    Scope.objects.filter(scope_id=world.scope_id)  # the scope is here; the
    # bundle's own problems are reported first, the instance is never consulted

    with pytest.raises(CommandError, match="the first at line 3; nothing was"):
        call_command("import_bundle", str(path), stderr=io.StringIO())


def test_a_session_bundle_holds_that_session_only(api: ApiClient, world: World) -> None:
    response = api.get(
        f"/v1/scopes/{world.scope_id}/export", query={"session_id": "sess-1"}
    )
    records = [json.loads(line)["record"] for line in response.content.splitlines()]

    assert records[0]["session_id"] == "sess-1"
    notes = {r["source_id"] for r in records if r["kind"] == "source"}
    assert notes == {"n-active", "n-expired"}
    assert records[0]["counts"]["handoff_revision"] == 1  # it cites n-active
    assert records[0]["counts"]["handoff_head"] == 0
    assert records[0]["counts"]["envelope"] == 1
    assert records[0]["counts"]["closure"] == 0


def test_a_session_bundle_is_not_restored(
    api: ApiClient, world: World, tmp_path: Path
) -> None:
    response = api.get(
        f"/v1/scopes/{world.scope_id}/export", query={"session_id": "sess-3"}
    )
    path = tmp_path / "session.ndjson"
    path.write_bytes(response.content)
    stderr = io.StringIO()

    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_bundle", str(path), "--dry-run", stderr=stderr)

    assert "line 1: a session bundle (session 'sess-3')" in stderr.getvalue()


@pytest.mark.parametrize(
    ("suffix", "query", "status", "code"),
    [
        ("", {"session_id": "no-such-session"}, 404, "session_not_found"),
        ("", {"session_id": ""}, 400, "invalid_request"),
        ("x", {}, 404, "scope_not_found"),
    ],
)
def test_export_errors(
    api: ApiClient,
    world: World,
    suffix: str,
    query: dict[str, str],
    status: int,
    code: str,
) -> None:
    response = api.get(f"/v1/scopes/{world.scope_id}{suffix}/export", query=query)

    assert response.status_code == status
    assert error_of(response)["code"] == code


def test_a_held_scope_is_exported(api: ApiClient, world: World) -> None:
    held = api.post(f"/v1/scopes/{world.scope_id}/legal-holds", {"reason": "case"})
    assert held.status_code == 201

    response = api.get(f"/v1/scopes/{world.scope_id}/export")

    assert response.status_code == 200
    manifest = json.loads(response.content.splitlines()[0])["record"]
    assert manifest["counts"]["hold"] == 3
