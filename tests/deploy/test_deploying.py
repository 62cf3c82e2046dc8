"""docs/deploying.md, followed on this machine, as an operator would.

The ``sh`` blocks of the page run in order (``tests.deploy.runbook``): the env file
from ``.env.example`` with a generated secret, ``check --deploy``, migrate, static
files, the admin user and a token; the unit file's launcher command started from a
directory that is not the checkout; ``deploy/nginx.conf`` in front with TLS. Then,
through nginx: a registry written (captures, envelopes, handoffs), the proxy's
promises checked, a backup, a restore into a new database, every answer compared;
on PostgreSQL also the upgrade (a reload under traffic) and the key rotation with a
cursor in flight. Paths, ports and database names are the only things replaced;
the lines not run are ``tests.deploy.deployment.NOT_RUN``, each with its reason.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.deploy.answers import Registry, every_answer, registry_write
from tests.deploy.deployment import (
    DOC,
    NOT_RUN,
    PATH,
    ROOT,
    SQLITE_URL,
    Deployment,
    deployment_on,
    install,
)
from tests.deploy.proxy import (
    admin_login,
    assert_https_comes_from_the_proxy,
    assert_long_urls_and_large_bodies_reach_the_service,
    assert_nginx_serves_static_files,
    assert_request_ids_pass_through,
    assert_stalled_clients_hold_no_thread,
)
from tests.deploy.runbook import Runbook, substitute
from tests.robustness.processes import (
    database_create,
    database_drop,
    database_url_for,
)


@pytest.fixture
def postgres_names() -> Iterator[tuple[str, str]]:
    """A throwaway database (and the name of its restore), dropped afterwards."""
    server = os.environ["DATABASE_URL"]
    name = f"pc_deploy_{secrets.token_hex(6)}"
    database_create(server, name)
    try:
        yield server, name
    finally:
        database_drop(server, name)
        database_drop(server, f"{name}_restored")


class Traffic(threading.Thread):
    """GETs ``path`` through ``client`` one after another until stopped."""

    def __init__(self, client: httpx.Client, path: str) -> None:
        super().__init__()
        self.client, self.path = client, path
        self.statuses: list[int] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            self.statuses.append(self.client.get(self.path).status_code)

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=60)


def _extra_scope(client: httpx.Client) -> None:
    """A write after the backup: the restore must not have it."""
    response = client.post(
        "/v1/scopes",
        json={"title": "After", "summary": "the backup", "idempotency_key": "after"},
    )
    assert response.status_code == 201


@pytest.mark.postgres
def test_deploying_md_on_postgresql(
    tmp_path: Path, postgres_names: tuple[str, str]
) -> None:
    server, name = postgres_names
    with deployment_on(tmp_path, name) as deployment:
        token, password = install(deployment, database_url_for(server, name))
        assert_request_ids_pass_through(deployment, token)
        assert_nginx_serves_static_files(deployment)
        assert_https_comes_from_the_proxy(deployment, token)
        assert_long_urls_and_large_bodies_reach_the_service(deployment, token)
        assert_stalled_clients_hold_no_thread(deployment, token)
        admin = admin_login(deployment, password)
        with deployment.client(token) as client:
            registry = registry_write(client)
            before = every_answer(client, registry)

            deployment.book.run_section("PostgreSQL")
            _extra_scope(client)
            deployment.book.run_section("Restoring PostgreSQL")
            database_drop(server, name)  # nothing may still read the original
            assert every_answer(client, registry) == before

            _upgrade_under_traffic(deployment, token, registry)
            _rotate_with_a_cursor_in_flight(deployment, client, registry, admin)
        admin.close()


def _upgrade_under_traffic(
    deployment: Deployment, token: str, registry: Registry
) -> None:
    """Section 9 while a client keeps reading: the reload refuses nothing."""
    with deployment.client(token) as client:
        traffic = Traffic(client, f"/v1/scopes/{registry.scopes[0]}/sources")
        traffic.start()
        try:
            time.sleep(0.5)
            deployment.book.run_section("9. Upgrades")
            time.sleep(0.5)
        finally:
            traffic.stop()
    assert len(traffic.statuses) > 10
    assert set(traffic.statuses) == {200}, traffic.statuses


def _rotate_with_a_cursor_in_flight(
    deployment: Deployment,
    client: httpx.Client,
    registry: Registry,
    admin: httpx.Client,
) -> None:
    path = f"/v1/scopes/{registry.scopes[0]}/sources"
    first = client.get(path, params={"limit": 2}).json()
    rest = {"limit": 2, "cursor": first["next_cursor"]}
    expected = client.get(path, params=rest).json()["items"]

    deployment.book.run_section("10. Rotating the secret key", block=0)
    during = client.get(path, params=rest)
    admin_during = admin.get("/admin/")
    deployment.book.run_section("10. Rotating the secret key", block=1)
    after = client.get(path, params=rest)

    assert (during.status_code, during.json()["items"]) == (200, expected)
    assert admin_during.status_code == 200
    assert after.status_code == 400
    assert after.json()["error"]["code"] == "invalid_cursor"
    assert admin.get("/admin/").status_code == 200  # moved to the new key meanwhile


def test_deploying_md_on_sqlite(tmp_path: Path) -> None:
    with deployment_on(tmp_path, "pc_deploy_sqlite") as deployment:
        token, password = install(
            deployment, substitute(SQLITE_URL, deployment.replacements)
        )
        _nothing_in_the_service_users_home(deployment)
        admin_login(deployment, password).close()
        with deployment.client(token) as client:
            registry = registry_write(client)
            before = every_answer(client, registry)

            deployment.book.run_section("SQLite")
            _extra_scope(client)
            deployment.book.run_section("Restoring SQLite")
            assert every_answer(client, registry) == before


def _nothing_in_the_service_users_home(deployment: Deployment) -> None:
    """The unit's server keeps nothing in the service user's home (gunicorn's
    control socket went there without the unit's runtime directory), where a
    second instance or a ``make run`` of the same user would meet it."""
    home = deployment.tmp / "home"
    assert not [path.name for path in home.iterdir()]


def test_every_sh_block_of_deploying_md_is_run_by_these_tests() -> None:
    """The headings the tests above run cover every block of the page."""
    run = {
        "1. Install",
        "2. The database",
        "3. The env file",
        "4. Migrate, static files, the admin user, a token",
        "5. The server under systemd",
        "6. nginx",
        "7. Health checks",
        "PostgreSQL",
        "Restoring PostgreSQL",
        "SQLite",
        "Restoring SQLite",
        "9. Upgrades",
        "10. Rotating the secret key",
    }
    book = Runbook(
        DOC,
        workdir=Path("/nonexistent"),
        env={},
        replacements={},
        not_run=NOT_RUN,
        systemctl=lambda words: None,
    )

    assert set(book.headings()) == run
    assert len([b for b in book.blocks if b.heading.startswith("10.")]) == 2


def test_check_deploy_is_clean_with_the_documented_env_file(tmp_path: Path) -> None:
    """``.env.example`` plus the documented secret passes ``check --deploy`` with
    no warning (no database needed)."""
    env_file = tmp_path / "powercontext.env"
    text = (ROOT / ".env.example").read_text()
    env_file.write_text(
        text.replace(
            "DJANGO_SECRET_KEY=\n", f"DJANGO_SECRET_KEY={secrets.token_urlsafe(50)}\n"
        )
    )
    env = {"PATH": PATH, "POWERCONTEXT_ENV_FILE": str(env_file)}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout
