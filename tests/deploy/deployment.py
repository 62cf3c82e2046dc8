"""The host of docs/deploying.md, in temporary directories, driven by the page.

``deployment_on`` prepares it (the substitutions, the unit file, nginx with a
self-signed certificate, the runbook of the page's ``sh`` blocks) and stops
everything at the end; ``install`` runs steps 1 to 7. ``NOT_RUN`` lists the lines
of the page that need the real host, each with the reason it is not run.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.deploy.host import (
    Nginx,
    SystemdUnit,
    certificate,
    children,
    tls_context,
    tools_check,
)
from tests.deploy.runbook import Runbook, substitute
from tests.robustness.processes import free_port, wait_until

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "deploying.md"
HOST = "context.example.com"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SQLITE_URL = "sqlite:////var/lib/powercontext/powercontext.sqlite3"

NOT_RUN = {
    "apt-get install -y python3 python3-venv git nginx postgresql-client": (
        "host packages: make test installs what the tests need"
    ),
    "useradd --system --home-dir /var/lib/powercontext --shell /usr/sbin/nologin "
    "powercontext": "creates a system user",
    'git clone "$POWERCONTEXT_REPOSITORY" /srv/powercontext': (
        "the suite runs in a checkout"
    ),
    "python3 -m venv .venv": "make created the suite's .venv the same way",
    "runuser -u powercontext -- /srv/powercontext/.venv/bin/python -c 'import django'": (
        "needs the powercontext user"
    ),
    ".venv/bin/pip install -e .": (
        "make installed the checkout with this command; reinstalling it would "
        "disturb the suite that is running from it"
    ),
    "git fetch origin": "the checkout under test is the release",
    "git diff HEAD origin/HEAD -- CHANGELOG.md": "as above: no remote to compare with",
    "git merge --ff-only origin/HEAD": "as above",
    'runuser -u postgres -- psql -v ON_ERROR_STOP=1 -v password="$DB_PASSWORD" '
    "-c \"CREATE ROLE powercontext LOGIN PASSWORD :'password'\"": (
        "creates a role on the suite's server; the test uses a throwaway database"
    ),
    "runuser -u postgres -- createdb --owner=powercontext --encoding=UTF8 "
    "powercontext": "the test creates a throwaway database instead",
    "chgrp -R powercontext /etc/powercontext && chmod 0640 "
    "/etc/powercontext/powercontext.env": "needs the powercontext user",
    "chown powercontext:powercontext /var/lib/powercontext/powercontext.sqlite3": (
        "needs the powercontext user"
    ),
    "cp /srv/powercontext/deploy/powercontext.service "
    "/etc/systemd/system/powercontext.service": "the test runs deploy/ itself",
    "systemctl daemon-reload": "no systemd here; the test runs the unit file",
    "cp /srv/powercontext/deploy/nginx.conf /etc/nginx/sites-available/powercontext": (
        "the test runs deploy/nginx.conf in a prefix of its own"
    ),
    "ln -s /etc/nginx/sites-available/powercontext "
    "/etc/nginx/sites-enabled/powercontext": "as above",
    "nginx -t": "the test runs nginx -t on its own configuration before starting it",
}


@dataclass
class Deployment:
    """The host of docs/deploying.md, in temporary directories."""

    tmp: Path
    server_port: int
    http_port: int
    https_port: int
    chain: Path
    unit: SystemdUnit
    nginx: Nginx
    replacements: dict[str, str]
    book: Runbook = field(init=False)

    @property
    def env_file(self) -> Path:
        return self.tmp / "etc" / "powercontext.env"

    @property
    def nginx_log(self) -> Path:
        return self.tmp / "nginx" / "logs" / "powercontext.access.log"

    def client(self, token: str | None = None, **options: Any) -> httpx.Client:
        """HTTPS through nginx, as a client of context.example.com."""
        headers = {"Host": HOST}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return httpx.Client(
            base_url=f"https://127.0.0.1:{self.https_port}",
            headers=headers,
            verify=tls_context(self.chain),
            timeout=options.pop("timeout", 30),
            **options,
        )

    def direct(self, timeout: float = 10) -> httpx.Client:
        """Plain HTTP straight to the server, bypassing nginx."""
        return httpx.Client(
            base_url=f"http://127.0.0.1:{self.server_port}",
            headers={"Host": HOST},
            timeout=timeout,
        )

    def env_file_set(self, **values: str) -> None:
        """Edit the env file as step 3 says: replace each NAME=... line (or add it)."""
        text = substitute(self.env_file.read_text(), self.replacements)
        for name, value in values.items():
            text, found = re.subn(rf"(?m)^{name}=.*$", f"{name}={value}", text)
            text += "" if found else f"{name}={value}\n"
        self.env_file.write_text(text)

    def ready(self) -> bool:
        self.unit.check_alive()
        try:
            with self.direct(timeout=5) as client:
                return client.get("/health/ready").status_code == 200
        except httpx.TransportError:
            return False

    def systemctl(self, words: list[str]) -> None:
        verb, unit = words[0], words[-1]
        if unit == "nginx" and verb == "reload":
            self.nginx.reload(self.https_port)
        elif (verb, unit) in (("enable", "powercontext"), ("start", "powercontext")):
            assert verb == "start" or "--now" in words, words
            self.unit.start()
            wait_until(self.ready, timeout=60, what="the service to be ready")
        elif (verb, unit) == ("reload", "powercontext"):
            self.reload()
        elif (verb, unit) == ("stop", "powercontext"):
            self.unit.stop()
        else:
            pytest.fail(f"systemctl {' '.join(words)} is not emulated")

    def reload(self) -> None:
        """ExecReload, then wait until every old worker is gone and new ones serve."""
        old = children(self.unit.main_pid)
        self.unit.reload()

        def replaced() -> bool:
            now = children(self.unit.main_pid)
            return bool(now) and not now & old and self.ready()

        wait_until(replaced, timeout=60, what="the workers to be replaced")


@contextlib.contextmanager
def deployment_on(tmp: Path, database: str) -> Iterator[Deployment]:
    """A deployment of the checkout on ``database`` (a throwaway PostgreSQL
    database's name, or ``sqlite``); everything started is stopped on exit."""
    tools_check()
    ports = [free_port() for _ in range(3)]
    lib = tmp / "lib"
    for directory in ("etc", "lib", "backups", "run", "home", "curl", "nginx", "cwd"):
        (tmp / directory).mkdir()
    replacements = {
        "/srv/powercontext": str(ROOT),
        "/etc/powercontext": str(tmp / "etc"),
        "/var/lib/powercontext": str(lib),
        "/var/backups/powercontext": str(tmp / "backups"),
        "/run/powercontext": str(tmp / "run"),
        "powercontext_restored": f"{database}_restored",
        f"https://{HOST}/": f"https://{HOST}:{ports[2]}/",
        f"http://{HOST}/": f"http://{HOST}:{ports[1]}/",
    }
    chain, key = certificate(tmp / "nginx", HOST)
    site = substitute((ROOT / "deploy" / "nginx.conf").read_text(), replacements)
    site = substitute(
        site,
        {
            "listen 80;": f"listen 127.0.0.1:{ports[1]};",
            "listen 443 ssl;": f"listen 127.0.0.1:{ports[2]} ssl;",
            "server 127.0.0.1:8000;": f"server 127.0.0.1:{ports[0]};",
            "/etc/ssl/powercontext/fullchain.pem": str(chain),
            "/etc/ssl/powercontext/privkey.pem": str(key),
            "/var/log/nginx": str(tmp / "nginx" / "logs"),
        },
    )
    (tmp / "curl" / ".curlrc").write_text(
        f'resolve = "{HOST}:{ports[1]}:127.0.0.1"\n'
        f'resolve = "{HOST}:{ports[2]}:127.0.0.1"\n'
        f'cacert = "{chain}"\n'
    )
    # PYTHONPATH: the checkout under test, wherever the virtual environment's
    # editable install points (a git worktree may share another's .venv).
    base_env = {
        "PATH": PATH,
        "LANG": "C.UTF-8",
        "HOME": str(tmp / "home"),
        "PYTHONPATH": str(ROOT),
    }
    unit = SystemdUnit(
        ROOT / "deploy" / "powercontext.service",
        replacements=replacements,
        base_env=base_env,
        workdir=tmp / "cwd",
        log_path=tmp / "service.log",
    )
    nginx = Nginx(site, tmp / "nginx")
    deployment = Deployment(tmp, *ports, chain, unit, nginx, replacements)
    deployment.book = Runbook(
        DOC,
        workdir=tmp,
        env={**base_env, "CURL_HOME": str(tmp / "curl")},
        replacements=replacements,
        not_run=NOT_RUN,
        systemctl=deployment.systemctl,
    )
    try:
        yield deployment
    finally:
        try:
            nginx.close()
        finally:
            unit.stop()


def install(deployment: Deployment, database_url: str) -> tuple[str, str]:
    """Steps 1 to 7; returns (API token, admin password)."""
    book = deployment.book
    book.run_section("1. Install")
    book.run_section("2. The database")
    book.run_section("3. The env file")
    secret = re.search(r"(?m)^DJANGO_SECRET_KEY=(.*)$", deployment.env_file.read_text())
    assert secret is not None
    assert len(secret.group(1)) >= 50
    deployment.env_file_set(
        DATABASE_URL=database_url,
        POWERCONTEXT_BIND=f"127.0.0.1:{deployment.server_port}",
        POWERCONTEXT_WORKERS="2",
        POWERCONTEXT_THREADS="2",
    )
    book.run_section("4. Migrate, static files, the admin user, a token")
    book.run_section("5. The server under systemd")
    book.run_section("6. nginx")
    book.run_section("7. Health checks")
    return book.variable("TOKEN"), book.variable("ADMIN_PASSWORD")
