"""One member of a JSON object column, read as JSON on every database.

Django's key transform (``values_list("meta__key")``) reads a key with
``JSON_EXTRACT`` on SQLite, which returns the SQL value: a stored string ``"42"``
comes back as the text ``42``, which the field then decodes a second time into
the number 42 (and ``"quoted"`` loses its quotes). PostgreSQL's ``->`` returns the
JSON value itself. ``JSONMember`` uses ``->`` on both: SQLite (3.38+) answers
``column -> 'key'`` with the JSON text of the member too, so the field decodes it
exactly once. A missing key is NULL on both; a JSON ``null`` member is ``None``.
"""

from __future__ import annotations

import re
from typing import Any

from django.db.models import Func, JSONField, TextField

from powercontext.jsonvalues import StoredJSONDecoder

# SQLite reads a right operand starting with "$" as a path: keys are plain labels.
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+", re.ASCII)


class JSONMember(Func):
    """``column -> 'key'``: the member ``key`` of a JSON object column, as JSON."""

    arity = 1

    def __init__(self, column: str, key: str) -> None:
        if not _PLAIN_KEY.fullmatch(key):
            raise ValueError(f"JSONMember keys are plain labels, not {key!r}")
        super().__init__(column, output_field=JSONField(decoder=StoredJSONDecoder))
        self.key = key

    def as_sql(  # type: ignore[override]
        self, compiler: Any, connection: Any, **extra_context: Any
    ) -> tuple[str, tuple[Any, ...]]:
        sql, params = compiler.compile(self.source_expressions[0])
        return f"({sql} -> %s)", (*params, self.key)


class JSONText(Func):
    """A JSON column as its stored text, never decoded (PostgreSQL prints jsonb;
    SQLite stores the text)."""

    arity = 1
    output_field = TextField()

    def as_sql(  # type: ignore[override]
        self, compiler: Any, connection: Any, **extra_context: Any
    ) -> tuple[str, tuple[Any, ...]]:
        sql, params = compiler.compile(self.source_expressions[0])
        if connection.vendor == "postgresql":
            return f"({sql})::text", tuple(params)
        return sql, tuple(params)
