"""gunicorn finds its configuration from anywhere, or refuses to serve.

Started from a directory that is not the checkout: with ``-c`` naming
``gunicorn.conf.py`` it serves as configured (the env file's bind address and
worker count, gunicorn's own gthread workers); without it, the application refuses
to load and gunicorn exits. Which clients may mark a request HTTPS is gunicorn's
``FORWARDED_ALLOW_IPS``, not ``DJANGO_SECURE_PROXY_SSL_HEADER``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.robustness.processes import BIN, ROOT, free_port, tail, wait_until

SECRET = "gunicorn-config-test-" + "s" * 50


class Server:
    """One gunicorn, started in ``cwd`` with ``args``; output in ``log``."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.log = cwd / f"gunicorn-{len(list(cwd.glob('gunicorn-*')))}.log"
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                [str(BIN / "gunicorn"), *args],
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """``start(args, env)`` from a directory of its own; every server is killed."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    started: list[Server] = []

    def run(args: list[str], env: dict[str, str]) -> Server:
        server = Server(args, env, elsewhere)
        started.append(server)
        return server

    yield run
    for server in started:
        server.stop()


def service_env(tmp_path: Path, port: int, **extra: str) -> dict[str, str]:
    env_file = tmp_path / "service.env"
    env_file.write_text(
        "DJANGO_SETTINGS_MODULE=powercontext.settings.production\n"
        f"DJANGO_SECRET_KEY={SECRET}\n"
        "DJANGO_ALLOWED_HOSTS=127.0.0.1\n"
        f"DATABASE_URL=sqlite:///{tmp_path / 'db.sqlite3'}\n"
        f"POWERCONTEXT_BIND=127.0.0.1:{port}\n"
        "POWERCONTEXT_WORKERS=2\n"
        "POWERCONTEXT_THREADS=2\n"
    )
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "POWERCONTEXT_ENV_FILE": str(env_file),
        **extra,
    }


def answering(server: Server, url: str) -> bool:
    if server.process.poll() is not None:
        pytest.fail(f"gunicorn exited:\n{server.output()[-3000:]}")
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def serving_with_c(
    start: Callable[..., Server], tmp_path: Path, port: int, workers: int, **extra: str
) -> Server:
    """gunicorn started with ``-c gunicorn.conf.py`` (environment ``extra`` over
    the env file), once it answers and its ``workers`` workers have booted."""
    server = start(
        ["-c", str(ROOT / "gunicorn.conf.py"), "powercontext.wsgi:application"],
        service_env(tmp_path, port, **extra),
    )
    wait_until(
        lambda: answering(server, f"http://127.0.0.1:{port}/health/live"),
        timeout=60,
        what="gunicorn",
    )
    wait_until(
        lambda: server.output().count("Booting worker with pid") >= workers,
        timeout=30,
        what="the workers to boot",
    )
    time.sleep(0.5)  # the arbiter spawns all its workers at once
    return server


def test_with_c_it_serves_as_configured_from_any_directory(
    start: Callable[..., Server], tmp_path: Path
) -> None:
    server = serving_with_c(start, tmp_path, free_port(), workers=2)

    assert "Using worker: gthread" in (server.output())
    assert server.output().count("Booting worker with pid") == 2


@pytest.mark.parametrize(
    "args",
    [
        ["powercontext.wsgi:application"],
        ["--chdir", str(ROOT), "powercontext.wsgi:application"],
    ],
    ids=["no -c", "--chdir"],
)
def test_without_its_configuration_it_refuses_to_start(
    start: Callable[..., Server], tmp_path: Path, args: list[str]
) -> None:
    port = free_port()  # gunicorn's own default, 8000, may be taken
    server = start([f"--bind=127.0.0.1:{port}", *args], service_env(tmp_path, port))

    returncode = server.process.wait(timeout=60)

    assert returncode != 0
    assert (
        "gunicorn was started without powercontext's gunicorn.conf.py; start it "
        f"with -c {ROOT / 'gunicorn.conf.py'}" in server.output()
    )


def test_a_missing_configuration_file_stops_it(
    start: Callable[..., Server], tmp_path: Path
) -> None:
    server = start(
        ["-c", "gunicorn.conf.py", "powercontext.wsgi:application"],
        service_env(tmp_path, free_port()),
    )

    assert server.process.wait(timeout=60) != 0
    assert "'gunicorn.conf.py' doesn't exist" in server.output()


@pytest.mark.parametrize(
    ("forwarded_allow_ips", "proxy_ssl_header", "status"),
    [
        ("127.0.0.1", "false", 401),  # from the proxy's address: HTTPS
        ("10.9.9.9", "false", 301),  # from elsewhere: ignored, redirected
        ("10.9.9.9", "true", 401),  # Django's switch believes anyone
    ],
    ids=["trusted address", "other address", "DJANGO_SECURE_PROXY_SSL_HEADER"],
)
def test_who_may_mark_a_request_https(
    start: Callable[..., Server],
    tmp_path: Path,
    forwarded_allow_ips: str,
    proxy_ssl_header: str,
    status: int,
) -> None:
    """``X-Forwarded-Proto: https`` from 127.0.0.1, with the HTTPS redirect on.

    401 means the request was taken as HTTPS (it reached authentication); 301 is
    the redirect of a plain HTTP request."""
    port = free_port()
    server = start(
        ["-c", str(ROOT / "gunicorn.conf.py"), "powercontext.wsgi:application"],
        service_env(
            tmp_path,
            port,
            FORWARDED_ALLOW_IPS=forwarded_allow_ips,
            DJANGO_SECURE_PROXY_SSL_HEADER=proxy_ssl_header,
        ),
    )
    wait_until(
        lambda: answering(server, f"http://127.0.0.1:{port}/health/live"),
        timeout=60,
        what="gunicorn",
    )

    response = httpx.get(
        f"http://127.0.0.1:{port}/v1/scopes",
        headers={"X-Forwarded-Proto": "https"},
    )

    assert response.status_code == status, tail(server.log)
