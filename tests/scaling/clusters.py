"""A PostgreSQL primary and its streaming replica, both private, on loopback."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import psycopg

from tests.robustness.processes import PG_BIN, PostgresCluster, database_url_for


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
