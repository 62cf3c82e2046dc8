"""Real processes for robustness tests: our service under granian, PostgreSQL clusters.

Everything started here runs in its own process group (or, for PostgreSQL, under
``pg_ctl``) so a test can kill it whole, and every starter is used from a fixture
whose teardown stops what it started, also when the test failed.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import psycopg
import pytest
from psycopg import sql

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PG_BIN = Path("/usr/lib/postgresql/15/bin")


def free_port() -> int:
    """An ephemeral loopback port that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until(
    condition: Callable[[], Any], *, timeout: float, what: str, interval: float = 0.05
) -> Any:
    """Poll ``condition`` until it returns something truthy; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def tail(path: Path, lines: int = 40) -> str:
    if not path.exists():
        return f"({path} does not exist)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


# --- Our service ----------------------------------------------------------------------


def service_env(database_url: str, settings: str, **extra: str) -> dict[str, str]:
    """The environment production gives the service, for ``database_url``.

    Nothing of the test process's own Django or PowerContext configuration leaks in
    (pytest-django sets ``DJANGO_SETTINGS_MODULE`` to the test settings).
    """
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "POWERCONTEXT_")) and key != "DATABASE_URL"
    }
    env.update(
        DJANGO_SETTINGS_MODULE=settings,
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_SECURE_SSL_REDIRECT="false",
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        DATABASE_URL=database_url,
        PYTHONUNBUFFERED="1",
        POWERCONTEXT_ENV_FILE="",  # no developer's .env
        # These tests drive a server harder than any one client would; the
        # rate-limit tests set their own limits.
        POWERCONTEXT_RATE_LIMIT_WRITE="off",
        POWERCONTEXT_RATE_LIMIT_READ="off",
        POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES="off",
    )
    env.update(extra)
    return env


def manage(env: dict[str, str], *args: str) -> str:
    """Run ``manage.py`` with ``env``; return its stdout, fail with its stderr."""
    completed = subprocess.run(
        [str(BIN / "python"), "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if completed.returncode != 0:
        pytest.fail(f"manage.py {' '.join(args)} failed:\n{completed.stderr}")
    return completed.stdout


def mint_token(env: dict[str, str]) -> str:
    """``manage.py createtoken --grant '*:admin'``; the token is the last line."""
    out = manage(env, "createtoken", "--name", "robustness", "--grant", "*:admin")
    return out.splitlines()[-1]


class LaunchedServer:
    """Our WSGI app under granian, started by the launcher as production starts it
    (``python -m powercontext.serve``); bind, workers and threads are given in its
    environment. The launcher and its workers share a process group of their own.
    """

    def __init__(
        self, env: dict[str, str], log_dir: Path, *, workers: int = 2, threads: int = 4
    ) -> None:
        self.env = env
        self.workers = workers
        self.threads = threads
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"server-{self.port}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, *, timeout: float = 60) -> None:
        assert self.process is None, "already running"
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [str(BIN / "python"), "-m", "powercontext.serve"],
                cwd=ROOT,
                env={
                    **self.env,
                    "POWERCONTEXT_BIND": f"127.0.0.1:{self.port}",
                    "POWERCONTEXT_WORKERS": str(self.workers),
                    "POWERCONTEXT_THREADS": str(self.threads),
                },
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        wait_until(self._serving, timeout=timeout, what=f"the server on {self.url}")
        wait_until(
            lambda: len(self.worker_pids()) == self.workers,
            timeout=timeout,
            what=f"{self.workers} workers",
        )

    def _serving(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            pytest.fail(
                f"the server exited with {self.process.returncode}:\n"
                + tail(self.log_path)
            )
        try:
            return httpx.get(f"{self.url}/health/live", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    def kill(self) -> None:
        """``kill -9`` the launcher and every worker at once, and wait until all died.

        The listening socket is shared by all of them, so the port refusing
        connections means no process of this server is left.
        """
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.process = None
        wait_until(
            self._refusing, timeout=30, what="killed workers to release the port"
        )

    def worker_pids(self) -> list[int]:
        """The pids of the launcher's children (its workers), from ``/proc``."""
        assert self.process is not None
        launcher = self.process.pid
        return sorted(
            int(pid)
            for children in Path(f"/proc/{launcher}/task").glob("*/children")
            for pid in children.read_text().split()
        )

    def kill_worker(self) -> int:
        """``kill -9`` one worker; granian starts another. Returns its pid."""
        victim = self.worker_pids()[0]
        os.kill(victim, signal.SIGKILL)
        return victim

    def _refusing(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            return True
        return False

    def stop(self) -> None:
        """Quick shutdown (SIGINT to the launcher), then SIGKILL to whatever is left.

        Safe to call when the server is not running.
        """
        if self.process is None:
            return
        process, self.process = self.process, None
        try:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=20)


# --- PostgreSQL -----------------------------------------------------------------------


def database_url_for(server_url: str, name: str) -> str:
    """``server_url`` with its database replaced by ``name``."""
    return urlsplit(server_url)._replace(path=f"/{name}").geturl()


def database_create(server_url: str, name: str) -> str:
    """Create database ``name`` on the server of ``server_url``; return its URL."""
    with psycopg.connect(server_url, autocommit=True, connect_timeout=10) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return database_url_for(server_url, name)


def database_drop(server_url: str, name: str) -> None:
    """Drop database ``name``, disconnecting whoever is still connected to it."""
    with psycopg.connect(server_url, autocommit=True, connect_timeout=10) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                sql.Identifier(name)
            )
        )


class PostgresCluster:
    """A throwaway PostgreSQL 15 cluster of our own, on a free loopback port.

    ``initdb`` refuses to run as root, so as root every PostgreSQL binary runs as
    the ``postgres`` OS user through ``runuser``, in a temporary directory that
    user owns. Trust authentication, loopback only, and fsync left on: a crash
    test must not pass because the cluster skipped flushing. Missing binaries fail
    the test with instructions; nothing is skipped.
    """

    def __init__(self) -> None:
        self._as_owner = self._owner_prefix()
        self.port = free_port()
        self.root = Path(
            tempfile.mkdtemp(
                prefix="pc-robust-pg-", dir="/tmp" if self._as_owner else None
            )
        )
        if self._as_owner:
            shutil.chown(self.root, "postgres", "postgres")
        self.data = self.root / "data"
        self.log_path = self.root / "postgres.log"
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/postgres"

    @staticmethod
    def _owner_prefix() -> list[str]:
        missing = [
            str(PG_BIN / name)
            for name in ("initdb", "pg_ctl", "postgres")
            if not (PG_BIN / name).is_file()
        ]
        prefix: list[str] = []
        if os.geteuid() == 0:
            runuser = shutil.which("runuser")
            if runuser is None:
                missing.append("runuser (Debian package util-linux)")
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                missing.append("the 'postgres' OS user (created by postgresql-15)")
            prefix = [runuser or "runuser", "-u", "postgres", "--"]
        if missing:
            pytest.fail(
                "A throwaway PostgreSQL 15 cluster is needed for this test, but "
                f"these are missing: {', '.join(missing)}. Install them with "
                "`apt-get install postgresql-15 util-linux` (.ci/run does so)."
            )
        return prefix

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        completed = subprocess.run(
            [*self._as_owner, *args],
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if check and completed.returncode != 0:
            pytest.fail(
                f"{' '.join(args)} failed ({completed.returncode}):\n"
                f"{completed.stdout}\n{completed.stderr}\n{tail(self.log_path)}"
            )
        return completed

    def init(self) -> None:
        self._run(
            str(PG_BIN / "initdb"),
            f"--pgdata={self.data}",
            "--username=postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--locale=C",
        )

    def start(self) -> None:
        """Start and wait until it accepts connections (also after a crash)."""
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1"
        self._run(
            str(PG_BIN / "pg_ctl"),
            f"--pgdata={self.data}",
            f"--log={self.log_path}",
            "--wait",
            "--timeout=90",
            f"--options={options}",
            "start",
        )

    def crash(self) -> None:
        """``pg_ctl stop -m immediate``: every backend dies, no checkpoint is taken."""
        self._run(
            str(PG_BIN / "pg_ctl"), f"--pgdata={self.data}", "--mode=immediate", "stop"
        )

    def stop(self, mode: str) -> None:
        """``pg_ctl stop -m fast`` (clients disconnected, a shutdown checkpoint) or
        ``-m immediate`` (a crash); ``start`` brings the cluster back."""
        self._run(
            str(PG_BIN / "pg_ctl"), f"--pgdata={self.data}", f"--mode={mode}", "stop"
        )

    def destroy(self) -> None:
        """Stop the cluster if it runs, and delete its files."""
        try:
            if (self.data / "postmaster.pid").exists():
                self._run(
                    str(PG_BIN / "pg_ctl"),
                    f"--pgdata={self.data}",
                    "--mode=immediate",
                    "stop",
                    check=False,
                )
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
