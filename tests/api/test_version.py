"""One version, from ``pyproject.toml``, everywhere the service shows one."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ApiClient
from tests.mcp.helpers import result_of, rpc

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT_VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
    "version"
]


def test_the_version_is_a_release_number() -> None:
    assert PYPROJECT_VERSION.count(".") == 2
    assert PYPROJECT_VERSION != "0.1.0"


def test_liveness_names_the_version_in_a_header_and_keeps_its_body() -> None:
    response = ApiClient().get("/health/live")

    assert response["X-PowerContext-Version"] == PYPROJECT_VERSION
    assert response.json() == {"status": "ok"}


def test_the_openapi_document_carries_the_version() -> None:
    document = ApiClient().get("/openapi.json").json()

    assert document["info"]["version"] == PYPROJECT_VERSION


def test_mcp_server_info_carries_the_version(api: ApiClient) -> None:
    initialize = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    }

    result = result_of(rpc(api, "initialize", initialize))

    assert result["serverInfo"]["version"] == PYPROJECT_VERSION


def test_manage_py_version_prints_the_service_version() -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )

    assert done.stdout == f"{PYPROJECT_VERSION}\n"
