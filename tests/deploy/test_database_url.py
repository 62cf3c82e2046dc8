"""The DATABASES entry a ``DATABASE_URL`` stands for: a password with URL
characters, percent-encoded by docs/deploying.md's command ("2. The database"),
reaches PostgreSQL as it was written; how PostgreSQL's connections are kept
(docs/operations.md, "Failure behaviour")."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

# The key as the backend reads it: the settings must write that one.
from powercontext.db.postgresql.base import CONNECT_WAIT
from powercontext.settings.databases import database_from_env, replica_from_env
from tests.deploy.deployment import DOC

# The page's one-liner, as printed (its interpreter path replaced by ours).
ENCODE = re.compile(
    r"^/srv/powercontext/\.venv/bin/python (-c '[^']+') 'p@ss/word'$", re.M
)


def _encoded(password: str) -> str:
    match = ENCODE.search(DOC.read_text())
    assert match, "deploying.md no longer shows the encoding command"
    code = match.group(1).removeprefix("-c '").removesuffix("'")
    done = subprocess.run(
        [sys.executable, "-c", code, password],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return done.stdout.rstrip("\n")


def test_the_page_s_example_encodes_as_it_says() -> None:
    assert _encoded("p@ss/word") == "p%40ss%2Fword"
    assert "(`p@ss/word` is `p%40ss%2Fword`)" in DOC.read_text()


@pytest.mark.parametrize(
    "password", ["p@ss/word", "a:b%c#d?e f", "p%40ss", "+plus&amp=eq", "ünï©ode"]
)
def test_an_encoded_password_is_read_back_whole(password: str) -> None:
    url = f"postgres://powercontext:{_encoded(password)}@db.example.net:5432/pc"

    config = database_from_env(url)

    assert (config["USER"], config["PASSWORD"]) == ("powercontext", password)
    assert (config["HOST"], config["PORT"], config["NAME"]) == (
        "db.example.net",
        5432,
        "pc",
    )


POSTGRES = "postgres://powercontext:secret@db.example.net:5432/pc"


def test_postgresql_keeps_a_checked_connection_per_thread_by_default() -> None:
    """Persistent connections, checked before reuse, waiting 10 s for a restart."""
    config = database_from_env(POSTGRES)

    assert "pool" not in config["OPTIONS"]
    assert config["CONN_MAX_AGE"] == 60
    assert config["CONN_HEALTH_CHECKS"] is True
    assert config[CONNECT_WAIT] == 10.0


def test_postgresql_takes_connections_from_a_pool_when_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("POWERCONTEXT_DB_POOL", "true")
    monkeypatch.setenv("POWERCONTEXT_DB_POOL_TIMEOUT", "4")

    config = database_from_env(POSTGRES)

    assert config["OPTIONS"]["pool"]["timeout"] == 4.0
    assert config["CONN_MAX_AGE"] == 0
    assert CONNECT_WAIT not in config


def test_the_replica_does_not_wait_for_a_connection() -> None:
    """An unreachable replica sends reads to the primary at once."""
    primary = database_from_env(POSTGRES)

    replica = replica_from_env(POSTGRES.replace("db.", "replica."), primary)

    assert replica[CONNECT_WAIT] == 0.0
