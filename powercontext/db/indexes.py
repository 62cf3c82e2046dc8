"""Indexes added to (or dropped from) tables that are already big: concurrently
on PostgreSQL.

``migrate`` runs while the previous release serves (docs/deploying.md, "The
migration rule"), and a plain ``CREATE INDEX`` on a registry of millions of rows
blocks every capture until it is built. Django's ``AddIndexConcurrently`` builds it
without blocking writes, but only PostgreSQL has that: on SQLite (the embedded
database, and the test suite's second run) the operation here creates the index
the ordinary way. Its migration must say ``atomic = False``.
"""

from __future__ import annotations

from typing import Any

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import models
from django.db.migrations.operations import AlterField


def key_indexes(schema_editor: Any, model: Any, field: Any) -> list[str]:
    """The names of the plain indexes on ``field``'s column alone, as the database
    lists them (Django's public introspection), without those the model declares.

    Django made one for the key (and on PostgreSQL a ``_like`` twin for a text key);
    their names are Django's to choose, so they are looked up, not computed.
    """
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(
            cursor, model._meta.db_table
        )
    declared = {index.name for index in model._meta.indexes}
    return sorted(
        name
        for name, info in constraints.items()
        if info["index"]
        and not info["unique"]
        and not info["primary_key"]
        and info["columns"] == [field.column]
        and name not in declared
    )


class AddIndexConcurrentlyWherePossible(AddIndexConcurrently):
    """``AddIndexConcurrently`` on PostgreSQL, ``AddIndex`` elsewhere."""

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_forwards(app_label, schema_editor, from_state, to_state)
            return
        model = to_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.add_index(model, self.index)

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        if schema_editor.connection.vendor == "postgresql":
            super().database_backwards(app_label, schema_editor, from_state, to_state)
            return
        model = from_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.remove_index(model, self.index)


class DropForeignKeyIndex(AlterField):
    """A foreign key's ``db_index=False``: drops the key's own index, nothing else.

    For a key whose column already leads a composite index or constraint, that
    index is only written, never needed: every insert maintains it. Django's own
    ``AlterField`` would also drop and re-add the foreign key constraint, and
    adding it back validates the whole table under a lock that blocks writes.
    This drops only the index Django made for the key (and PostgreSQL's
    ``_like`` twin of a text key), found by introspection, concurrently on
    PostgreSQL, so the migration must say ``atomic = False``; backwards, it builds
    them again (named ``<table>_<column>_key`` and ``..._key_like``).
    """

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        model = from_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        concurrently = (
            "CONCURRENTLY " if schema_editor.connection.vendor == "postgresql" else ""
        )
        for index in key_indexes(
            schema_editor, model, model._meta.get_field(self.name)
        ):
            schema_editor.execute(
                f"DROP INDEX {concurrently}IF EXISTS {schema_editor.quote_name(index)}"
            )

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        model = to_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        field = model._meta.get_field(self.name)
        connection = schema_editor.connection
        table = model._meta.db_table
        schema_editor.add_index(
            model, models.Index(fields=[field.name], name=f"{table}_{field.column}_key")
        )
        if connection.vendor == "postgresql" and field.db_type(connection).startswith(
            ("varchar", "text")
        ):
            # What Django adds for a text key: an index for LIKE 'prefix%'.
            opclass = f"{field.db_type(connection).split('(')[0]}_pattern_ops"
            schema_editor.add_index(
                model,
                models.Index(
                    fields=[field.name],
                    name=f"{table}_{field.column}_key_like",
                    opclasses=[opclass],
                ),
            )

    def describe(self) -> str:
        return f"Drop the index of {self.model_name}.{self.name}, covered by another"
