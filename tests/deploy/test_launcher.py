"""The launcher serves as configured from anywhere; granian without it refuses.

Started from a directory that is not the checkout: ``python -m powercontext.serve``
serves as configured (the env file's bind address and worker count, granian's WSGI
interface); granian started by hand, without the launcher, refuses to load the
application and exits. Which clients may mark a request HTTPS is
``FORWARDED_ALLOW_IPS`` (powercontext/api/wsgi_head.py), not
``DJANGO_SECURE_PROXY_SSL_HEADER``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.robustness.processes import BIN, ROOT, free_port, tail, wait_until

SECRET = "launcher-test-" + "s" * 50
LAUNCHER = [str(BIN / "python"), "-m", "powercontext.serve"]


class Server:
    """One server process, started in ``cwd`` with ``command``; output in ``log``."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self.log = cwd / f"server-{len(list(cwd.glob('server-*')))}.log"
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                command,
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
    """``start(command, env)`` from a directory of its own; every server is killed."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    started: list[Server] = []

    def run(command: list[str], env: dict[str, str]) -> Server:
        server = Server(command, env, elsewhere)
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
        # The checkout under test, wherever the virtual environment's editable
        # install points (a git worktree may share another checkout's .venv).
        "PYTHONPATH": str(ROOT),
        **extra,
    }


def answering(server: Server, url: str) -> bool:
    if server.process.poll() is not None:
        pytest.fail(f"the server exited:\n{server.output()[-3000:]}")
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def serving(
    start: Callable[..., Server], tmp_path: Path, port: int, workers: int, **extra: str
) -> Server:
    """The launcher (environment ``extra`` over the env file), once it answers and
    its ``workers`` workers have started."""
    server = start(LAUNCHER, service_env(tmp_path, port, **extra))
    wait_until(
        lambda: answering(server, f"http://127.0.0.1:{port}/health/live"),
        timeout=60,
        what="the server",
    )
    wait_until(
        lambda: server.output().count("Spawning worker-") >= workers,
        timeout=30,
        what="the workers to start",
    )
    return server


def test_it_serves_as_configured_from_any_directory(
    start: Callable[..., Server], tmp_path: Path
) -> None:
    port = free_port()
    server = serving(start, tmp_path, port, workers=2)

    assert f"Listening at: http://127.0.0.1:{port}" in server.output()
    assert server.output().count("Spawning worker-") == 2


def test_granian_without_the_launcher_refuses_to_start(
    start: Callable[..., Server], tmp_path: Path
) -> None:
    port = free_port()
    server = start(
        [
            str(BIN / "granian"),
            "--interface=wsgi",
            f"--port={port}",
            f"--working-dir={ROOT}",
            "powercontext.wsgi:application",
        ],
        service_env(tmp_path, port),
    )

    returncode = server.process.wait(timeout=60)

    assert returncode != 0
    assert (
        "granian was started without powercontext's launcher; start the server "
        "with python -m powercontext.serve" in server.output()
    )


@pytest.mark.parametrize(
    ("variable", "value", "refusal"),
    [
        ("POWERCONTEXT_WORKERS", "two", "POWERCONTEXT_WORKERS"),
        (
            "POWERCONTEXT_BIND",
            "127.0.0.1",
            "POWERCONTEXT_BIND: must be one of: host:port",
        ),
        ("POWERCONTEXT_KEEPALIVE", "0", "POWERCONTEXT_KEEPALIVE"),
    ],
)
def test_a_bad_value_stops_it_naming_the_variable(
    start: Callable[..., Server],
    tmp_path: Path,
    variable: str,
    value: str,
    refusal: str,
) -> None:
    server = start(LAUNCHER, service_env(tmp_path, free_port(), **{variable: value}))

    assert server.process.wait(timeout=60) != 0
    assert refusal in server.output()


def test_a_missing_env_file_stops_it(
    start: Callable[..., Server], tmp_path: Path
) -> None:
    env = service_env(tmp_path, free_port())
    env["POWERCONTEXT_ENV_FILE"] = str(tmp_path / "missing.env")
    server = start(LAUNCHER, env)

    assert server.process.wait(timeout=60) != 0
    assert "missing.env" in server.output()


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
    server = serving(
        start,
        tmp_path,
        port,
        workers=2,
        FORWARDED_ALLOW_IPS=forwarded_allow_ips,
        DJANGO_SECURE_PROXY_SSL_HEADER=proxy_ssl_header,
    )

    response = httpx.get(
        f"http://127.0.0.1:{port}/v1/scopes",
        headers={"X-Forwarded-Proto": "https"},
    )

    assert response.status_code == status, tail(server.log)
