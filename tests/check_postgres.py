"""Fail fast, with instructions, when the test PostgreSQL cannot be reached."""

import sys

import psycopg

url = sys.argv[1]
try:
    psycopg.connect(url, connect_timeout=5).close()
except psycopg.Error as exc:
    sys.exit(
        f"\nPostgreSQL is not reachable at {url}:\n  {exc}\n\n"
        "The suite runs on PostgreSQL (and SQLite); it never skips the PostgreSQL part.\n"
        "Start PostgreSQL, or point DATABASE_URL at a server you can create databases on:\n"
        "  DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/postgres make test\n"
    )
print(f"PostgreSQL reachable at {url}")
