"""Cursors for statements that run on every request."""

from __future__ import annotations

from typing import Any

from django.db import connection


def prepared_cursor() -> Any:
    """A cursor whose statements PostgreSQL may prepare and plan once per connection.

    On PostgreSQL (this project's engine, ``powercontext.db.postgresql``) the
    cursor binds parameters server-side, so psycopg prepares a statement after a few
    executions on a connection. Elsewhere it is an ordinary cursor. Use it for fixed
    SQL text with ``%s`` placeholders and one statement per execute.
    """
    factory = getattr(connection, "prepared_cursor", None)
    return factory() if factory is not None else connection.cursor()
