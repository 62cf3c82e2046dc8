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
from django.db.migrations.operations import AlterField


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
    ``_like`` twin of a text key), concurrently on PostgreSQL, so the migration
    must say ``atomic = False``; backwards, it builds them again.
    """

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        model = from_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        connection = schema_editor.connection
        postgres = connection.vendor == "postgresql"
        field = model._meta.get_field(self.name)
        name = schema_editor._create_index_name(model._meta.db_table, [field.column])
        names = [name]
        if postgres and field.db_type(connection).startswith(("varchar", "text")):
            names.append(f"{name}_like")
        concurrently = "CONCURRENTLY " if postgres else ""
        for index in names:
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
        schema_editor.execute(schema_editor._create_index_sql(model, fields=[field]))
        if schema_editor.connection.vendor == "postgresql":
            like = schema_editor._create_like_index_sql(model, field)
            if like is not None:
                schema_editor.execute(like)

    def describe(self) -> str:
        return f"Drop the index of {self.model_name}.{self.name}, covered by another"
