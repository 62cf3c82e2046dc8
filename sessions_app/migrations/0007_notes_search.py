"""Search over the envelopes' live working notes on SQLite (docs/operations.md).

An FTS5 table per match kind, fed by triggers on the envelope table in the
writing transaction: a row per envelope whose meta holds ``workingNotes``, gone
when the notes are cleared or erased. PostgreSQL needs no index: the search reads
the scope's envelopes (their identity index leads with the scope) and matches the
notes text in the query (``sessions_app.selectors.search``).
"""

from django.db import migrations

TABLES = {
    "sessions_notes_words": "tokenize = 'unicode61 remove_diacritics 0'",
    "sessions_notes_trigram": "tokenize = 'trigram case_sensitive 0'",
}
ENVELOPE = "sessions_app_sessionenvelope"
NOTES = "json_extract({row}.meta, '$.workingNotes')"


def _forward() -> list[str]:
    statements = [
        f"CREATE VIRTUAL TABLE {table} USING fts5(body, {options})"
        for table, options in TABLES.items()
    ]
    notes = NOTES.format(row="NEW")
    insert = "".join(
        f"INSERT INTO {table} (rowid, body) SELECT NEW.id, {notes} "
        f"WHERE {notes} IS NOT NULL; "
        for table in TABLES
    )
    delete = "".join(f"DELETE FROM {table} WHERE rowid = OLD.id; " for table in TABLES)
    statements += [
        f"CREATE TRIGGER sessions_notes_insert AFTER INSERT ON {ENVELOPE} "
        f"BEGIN {insert}END",
        f"CREATE TRIGGER sessions_notes_update AFTER UPDATE OF meta ON {ENVELOPE} "
        f"BEGIN {delete}{insert}END",
        f"CREATE TRIGGER sessions_notes_delete AFTER DELETE ON {ENVELOPE} "
        f"BEGIN {delete}END",
    ]
    statements += [
        f"INSERT INTO {table} (rowid, body) SELECT e.id, {NOTES.format(row='e')} "
        f"FROM {ENVELOPE} e WHERE {NOTES.format(row='e')} IS NOT NULL"
        for table in TABLES
    ]
    return statements


BACKWARD = [
    "DROP TRIGGER IF EXISTS sessions_notes_insert",
    "DROP TRIGGER IF EXISTS sessions_notes_update",
    "DROP TRIGGER IF EXISTS sessions_notes_delete",
    *(f"DROP TABLE IF EXISTS {table}" for table in TABLES),
]


def run(statements):  # type: ignore[no-untyped-def]
    def apply(apps, schema_editor):  # type: ignore[no-untyped-def]
        if schema_editor.connection.vendor != "sqlite":
            return
        for statement in statements:
            schema_editor.execute(statement, params=None)

    return apply


class Migration(migrations.Migration):
    dependencies = [("sessions_app", "0006_envelope_value_use")]

    operations = [migrations.RunPython(run(_forward()), run(BACKWARD))]
