"""Fail fast, with instructions, when the test PostgreSQL cannot be reached.

``make test`` and ``make test-browser`` run this first with ``DATABASE_URL``. The
suite connects to the database that URL names (tests/robustness and the TypeScript
client's live server create their own databases from that connection), so a
database missing on a reachable server is created here, announced, the way
tests/host_setup.sh installs a missing package: it is created from the server's
``postgres`` database, with the same user. Anything else that fails stops the run
with the one command to try.
"""

import sys
from urllib.parse import unquote, urlsplit

import psycopg
from psycopg import errors, sql

HELP = (
    "The suite runs on PostgreSQL (and SQLite); it never skips the PostgreSQL part.\n"
    "Start PostgreSQL, or point DATABASE_URL at a server you can create databases on:\n"
    "  DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/postgres make test\n"
)


def ensure_database(url: str) -> str | None:
    """Connect to ``url``; create its database when only that is missing.

    Returns the name of the database created, or None when it was there already.
    Raises ``psycopg.Error`` when the server cannot be reached or refuses. (A
    failed connection carries no SQLSTATE, so "missing" is asked of the server's
    ``postgres`` database, not read from the message.)
    """
    try:
        psycopg.connect(url, connect_timeout=5).close()
        return None
    except psycopg.Error as exc:
        failed = exc
        name = unquote(urlsplit(url).path.lstrip("/"))
        maintenance = urlsplit(url)._replace(path="/postgres").geturl()
        if not name or maintenance == url:
            raise
        try:
            conn = psycopg.connect(maintenance, autocommit=True, connect_timeout=5)
        except psycopg.Error:
            raise failed from None
    with conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
        if exists:
            raise failed
        try:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        except errors.DuplicateDatabase:
            return None  # created meanwhile by another run
    psycopg.connect(url, connect_timeout=5).close()
    return name


def main(url: str) -> None:
    try:
        created = ensure_database(url)
    except psycopg.Error as exc:
        sys.exit(f"\nPostgreSQL is not reachable at {url}:\n  {exc}\n\n{HELP}")
    if created is not None:
        print(
            f">>> make test: database {created!r} did not exist; "
            f"created it on {urlsplit(url).hostname}",
            file=sys.stderr,
        )
    print(f"PostgreSQL reachable at {url}")


if __name__ == "__main__":
    main(sys.argv[1])
