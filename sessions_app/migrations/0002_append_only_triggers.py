"""PostgreSQL triggers keeping envelope revisions and their values append-only.

The last layer under the model and queryset guards: it holds for raw SQL, ``psql``
sessions and any code path that bypasses the models. An UPDATE of a revision or
a value is refused; a DELETE of a revision is refused while it is its envelope's
latest (retention pruning never removes that one). Deleting older revisions and
unreferenced values stays possible: that is how retention works. SQLite relies on
the model and queryset layers.
"""

from django.db import migrations

from powercontext.db.guards import on_postgresql

FORWARD = [
    """
    CREATE OR REPLACE FUNCTION sessions_revision_guard() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' THEN
            RAISE EXCEPTION 'rows of % are append-only: UPDATE refused', TG_TABLE_NAME
                USING ERRCODE = 'P0001';
        END IF;
        IF EXISTS (
            SELECT 1 FROM sessions_app_sessionenvelope envelope
            WHERE envelope.id = OLD.envelope_id AND envelope.version <= OLD.version
        ) THEN
            RAISE EXCEPTION 'the latest revision of an envelope is kept: DELETE refused'
                USING ERRCODE = 'P0001';
        END IF;
        RETURN OLD;
    END
    $$;
    """,
    """
    CREATE TRIGGER sessions_app_enveloperevision_append_only
    BEFORE UPDATE OR DELETE ON sessions_app_enveloperevision
    FOR EACH ROW EXECUTE FUNCTION sessions_revision_guard();
    """,
    """
    CREATE OR REPLACE FUNCTION sessions_value_guard() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'rows of % are append-only: UPDATE refused', TG_TABLE_NAME
            USING ERRCODE = 'P0001';
    END
    $$;
    """,
    """
    CREATE TRIGGER sessions_app_envelopevalue_append_only
    BEFORE UPDATE ON sessions_app_envelopevalue
    FOR EACH ROW EXECUTE FUNCTION sessions_value_guard();
    """,
]

BACKWARD = [
    "DROP TRIGGER IF EXISTS sessions_app_envelopevalue_append_only"
    " ON sessions_app_envelopevalue;",
    "DROP TRIGGER IF EXISTS sessions_app_enveloperevision_append_only"
    " ON sessions_app_enveloperevision;",
    "DROP FUNCTION IF EXISTS sessions_value_guard();",
    "DROP FUNCTION IF EXISTS sessions_revision_guard();",
]


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0001_initial")]

    operations = [on_postgresql(FORWARD, BACKWARD)]
