"""A PostgreSQL primary and its streaming replica, and PgBouncer, all private, on
loopback."""

from __future__ import annotations

import contextlib
import csv
import io
import os
import shutil
import signal
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.robustness.processes import (
    PG_BIN,
    PostgresCluster,
    database_url_for,
    free_port,
    tail,
    wait_until,
)


class ReplicaCluster(PostgresCluster):
    """A hot standby made with ``pg_basebackup -R`` from ``primary``: it streams
    the primary's WAL and replays it, read-only."""

    def __init__(self, primary: PostgresCluster) -> None:
        super().__init__()
        self.primary = primary

    def init(self) -> None:
        self._run(
            str(PG_BIN / "pg_basebackup"),
            "--host=127.0.0.1",
            f"--port={self.primary.port}",
            "--username=postgres",
            f"--pgdata={self.data}",
            "--write-recovery-conf",
            "--wal-method=stream",
            "--checkpoint=fast",
        )

    def stop(self) -> None:
        self._run(
            str(PG_BIN / "pg_ctl"), f"--pgdata={self.data}", "--mode=fast", "stop"
        )

    def execute(self, database: str, statement: str) -> None:
        with psycopg.connect(
            database_url_for(self.url, database), autocommit=True
        ) as connection:
            connection.execute(statement)  # type: ignore[arg-type]

    @contextlib.contextmanager
    def replay_paused(self, database: str) -> Iterator[None]:
        """The replica receives WAL but applies none of it: it falls behind."""
        self.execute(database, "SELECT pg_wal_replay_pause()")
        try:
            yield
        finally:
            self.execute(database, "SELECT pg_wal_replay_resume()")


class PgBouncer:
    """PgBouncer (the Debian package) in transaction mode in front of a PostgreSQL
    server, on a free loopback port, run as the ``postgres`` OS user when we are
    root (it refuses to run as root)."""

    def __init__(self, server_port: int, *, pool_size: int) -> None:
        self._as_owner = PostgresCluster._owner_prefix()
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="pc-pgbouncer-", dir="/tmp"))
        if self._as_owner:
            shutil.chown(self.root, "postgres", "postgres")
        self.log_path = self.root / "pgbouncer.log"
        users = self.root / "users.txt"
        users.write_text('"postgres" ""\n')
        (self.root / "pgbouncer.ini").write_text(
            "[databases]\n"
            f"* = host=127.0.0.1 port={server_port}\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\n"
            f"unix_socket_dir = {self.root}\n"
            f"auth_type = trust\nauth_file = {users}\nadmin_users = postgres\n"
            "pool_mode = transaction\n"
            f"default_pool_size = {pool_size}\nmax_client_conn = 500\n"
            f"logfile = {self.log_path}\npidfile = {self.root / 'pgbouncer.pid'}\n"
        )
        self.process: subprocess.Popen[bytes] | None = None

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
        if not Path(binary).is_file():
            pytest.fail(
                "PgBouncer is needed for this test: `apt-get install pgbouncer` "
                "(.ci/run does so)."
            )
        self.process = subprocess.Popen(
            [*self._as_owner, binary, str(self.root / "pgbouncer.ini")],
            cwd=self.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_until(self._answering, timeout=30, what="pgbouncer")

    def _answering(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            pytest.fail(f"pgbouncer exited:\n{tail(self.log_path)}")
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            return False
        return True

    def show(self, what: str) -> list[dict[str, str]]:
        """``SHOW <what>`` on PgBouncer's admin console (simple protocol: psql)."""
        completed = subprocess.run(
            [
                "psql",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-d",
                "pgbouncer",
                "--csv",
                "-c",
                f"SHOW {what}",
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        return list(csv.DictReader(io.StringIO(completed.stdout)))

    def stop(self) -> None:
        if self.process is not None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)
            self.process = None
        shutil.rmtree(self.root, ignore_errors=True)
