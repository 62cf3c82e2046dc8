"""Health probes, the OpenAPI document, the docs page, deploy settings."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.db import connection

from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db


def test_liveness_is_exactly_ok() -> None:
    response = ApiClient().get("/health/live")

    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readiness_checks_the_database() -> None:
    response = ApiClient().get("/health/ready")

    assert response.status_code == 200
    assert response.json() == {"status": "ready", "checks": {"database": "ready"}}


def test_readiness_is_503_when_the_database_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.db import OperationalError

    def refuse(*args: object, **kwargs: object) -> None:
        raise OperationalError("connection refused")

    monkeypatch.setattr(connection, "cursor", refuse)

    response = ApiClient().get("/health/ready")

    assert response.status_code == 503
    assert response.json() == {
        "status": "not_ready",
        "checks": {"database": "unavailable"},
    }


def test_openapi_document_is_public_json_with_the_reference_operation_ids() -> None:
    response = ApiClient().get("/openapi.json")

    assert response.status_code == 200
    document = response.json()
    operation_ids = {
        operation["operationId"]
        for path in document["paths"].values()
        for operation in path.values()
    }
    assert {
        "create_scope",
        "get_scope",
        "list_scopes",
        "get_liveness",
        "get_readiness",
    } <= operation_ids


def test_docs_page_uses_local_assets_only() -> None:
    response = ApiClient().get("/docs")

    page = response.content.decode()
    assert response.status_code == 200
    assert "/static/drf_spectacular_sidecar/" in page
    assert "cdn" not in page.lower()


def test_production_settings_pass_check_deploy(tmp_path) -> None:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "powercontext.settings.production",
        "DJANGO_SECRET_KEY": "x" * 20 + "-not-a-real-secret-" + "y" * 30,
        "DATABASE_URL": f"sqlite:///{tmp_path / 'deploy.sqlite3'}",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 0, result.stdout + result.stderr


def test_production_settings_require_a_secret_key(tmp_path) -> None:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "powercontext.settings.production",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'deploy.sqlite3'}",
    }
    env.pop("DJANGO_SECRET_KEY", None)
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr


def test_https_redirect_exempts_health_paths(settings) -> None:
    settings.SECURE_SSL_REDIRECT = True

    assert ApiClient().get("/health/live").status_code == 200
    assert ApiClient().get("/v1/scopes").status_code == 301
