"""PostgreSQL triggers that keep revisions and their values append-only.

The Python layers (``models.AppendOnlyQuerySet``, ``save()``, the read-only
admin) stop the application; these triggers also stop raw SQL, a shell or another
client: an UPDATE of a revision or a value fails, and so does a DELETE of the
revision that is its envelope's latest one (retention never removes it).

They are (re)installed after every ``migrate`` by a ``post_migrate`` handler, so
they exist in every database, including the test databases that pytest-django
builds without running migrations. Installing is idempotent. SQLite has no such
layer; the Python ones apply there.
"""

from __future__ import annotations

from typing import Any

from django.db import connections

# The table names are the models' defaults; ``test_guards`` checks they still are.
GUARDED_TABLES = {
    "envelopes": "sessions_app_sessionenvelope",
    "revisions": "sessions_app_enveloperevision",
    "values": "sessions_app_envelopevalue",
}
_STATEMENTS = (
    """
        CREATE OR REPLACE FUNCTION sessions_app_revision_guard() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'UPDATE' THEN
                RAISE EXCEPTION 'envelope revisions are append-only';
            END IF;
            IF EXISTS (
                SELECT 1 FROM sessions_app_sessionenvelope e
                WHERE e.id = OLD.envelope_id AND e.version <= OLD.version
            ) THEN
                RAISE EXCEPTION 'the latest revision of an envelope is never deleted';
            END IF;
            RETURN OLD;
        END;
        $$
        """,
    """
        CREATE OR REPLACE TRIGGER sessions_app_revision_guard
        BEFORE UPDATE OR DELETE ON sessions_app_enveloperevision
        FOR EACH ROW EXECUTE FUNCTION sessions_app_revision_guard()
        """,
    """
        CREATE OR REPLACE FUNCTION sessions_app_value_guard() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'envelope values are append-only';
        END;
        $$
        """,
    """
        CREATE OR REPLACE TRIGGER sessions_app_value_guard
        BEFORE UPDATE ON sessions_app_envelopevalue
        FOR EACH ROW EXECUTE FUNCTION sessions_app_value_guard()
        """,
)


def install_append_only_guards(using: str = "default", **kwargs: Any) -> None:
    """Create or replace the triggers on ``using`` (a no-op on other databases)."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        for statement in _STATEMENTS:
            cursor.execute(statement)
