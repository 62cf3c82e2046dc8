"""Indexes added to tables that are already big: concurrently on PostgreSQL.

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
