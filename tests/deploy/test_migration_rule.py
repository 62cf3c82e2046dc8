"""Every migration of the project is safe while the previous release serves.

docs/deploying.md ("Upgrades") states the rule: ``migrate`` runs while old workers
serve, so a migration may only add - new tables, nullable columns or columns with a
database default, indexes and constraints on tables it creates, changes that emit
no SQL - and an index on an existing table comes with ``AddIndexConcurrently``.
Everything else needs two releases, and ``RunPython``/``RunSQL`` are reviewed one
by one. The SQL each operation emits is PostgreSQL's (the production database),
collected the way ``sqlmigrate`` collects it. Exceptions are listed below, each
with its reason; a new unsafe migration fails here until it is fixed or listed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import connection, migrations, models
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.operations.base import Operation
from django.db.migrations.state import ProjectState
from django.db.models.fields import NOT_PROVIDED

from powercontext.db.indexes import DropForeignKeyIndex

# Outside a test transaction: AddIndexConcurrently (sources 0007) refuses to run,
# even to collect its SQL, inside one.
pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
GUARDS = (
    "adds PostgreSQL triggers refusing UPDATE/DELETE/TRUNCATE on append-only tables; "
    "no release of the code ever does either, so old workers are unaffected"
)
NULLABLE = (
    "DROP NOT NULL changes the catalogue only (no rewrite, no scan); old workers "
    "always write a value, and only the new release's purge and redaction write NULL"
)
TOMBSTONE_GUARD = (
    "replaces the registry's row trigger with one that also allows the tombstone "
    "change; old workers never update a Source, so nothing they do changes outcome"
)
# (app label, migration, operation index) -> why it is safe anyway.
EXCEPTIONS = {
    ("sources", "0003_immutability_triggers", 0): GUARDS,
    ("sources", "0005_truncate_guards", 0): GUARDS,
    ("sessions_app", "0002_append_only_triggers", 0): GUARDS,
    ("sessions_app", "0004_truncate_guards", 0): GUARDS,
    ("handoffs", "0002_immutability_triggers", 0): GUARDS,
    ("handoffs", "0003_truncate_guards", 0): GUARDS,
    ("api", "0003_access_change_guards", 0): GUARDS,
    ("api", "0003_access_change_guards", 1): GUARDS,
    ("sources", "0008_lifecycle", 2): NULLABLE,
    ("sources", "0008_lifecycle", 3): NULLABLE,
    ("sources", "0008_lifecycle", 5): TOMBSTONE_GUARD,
    ("sources", "0008_lifecycle", 6): "runs on SQLite only (no statement here)",
    ("sources", "0011_memory_records", 1): GUARDS,
    ("lifecycle", "0004_export_records", 1): GUARDS,
    ("sessions_app", "0007_notes_search", 0): (
        "runs on SQLite only: FTS5 tables and triggers for the envelope search "
        "(no statement on PostgreSQL)"
    ),
    ("sources", "0012_search", 0): (
        "adds pg_trgm, an IMMUTABLE function and two GIN indexes built with CREATE "
        "INDEX CONCURRENTLY (no lock that stops old workers' captures; the indexes "
        "follow their inserts by themselves); on SQLite, FTS5 tables fed by triggers "
        "on the registry, which old workers' inserts fire as well"
    ),
    ("sources", "0013_search_text_plpgsql", 0): (
        "replaces the body of the search indexes' IMMUTABLE function with a PL/pgSQL "
        "one giving the same results (tests/search/test_search_text_function.py); "
        "old workers' inserts evaluate whichever body is current, the indexes stay valid"
    ),
    ("sources", "0015_search_text_linear_walk", 0): (
        "replaces the body of the search index's IMMUTABLE function with one giving "
        "the same results in linear time (tests/search/test_search_text_function.py); "
        "old workers' inserts evaluate whichever body is current, the index stays valid"
    ),
    ("sources", "0014_words_through_trigrams", 0): (
        "drops the words search index CONCURRENTLY (no lock that stops captures); "
        "old workers' words searches still answer right, reading the scope without "
        "it, and one over a large scope may be 422 too_broad until they restart"
    ),
    ("sources", "0008_lifecycle", 7): GUARDS,
    ("lifecycle", "0002_immutability_triggers", 0): GUARDS,
    ("api", "0005_rotated_tokens_stay_revoked", 0): (
        "sets revoked_at on tokens rotated with a grace (UPDATE of existing rows); "
        "old workers read revoked_at nowhere on the request path, so they serve on"
    ),
    ("api", "0006_principals", 2): (
        "fills the new principal table from tokens and grants; old workers never "
        "read it, and the new code creates a missing principal on its first mint"
    ),
    # Envelope values addressed by use (docs/decisions/0032): the constraint swap
    # runs in the migration's one transaction, so old workers' inserts are deduped
    # by the old or the new constraint (for_notes has a database default); the new
    # unique index is built while value inserts wait (a short stop on small
    # tables). The data step only inserts and deletes; notes an old worker writes
    # between migrate and its restart are stored as other-key values, which is why
    # the upgrade note asks to apply this migration with envelope writers stopped.
    ("sessions_app", "0006_envelope_value_use", 0): "see 0006 above",
    ("sessions_app", "0006_envelope_value_use", 2): "see 0006 above",
    ("sessions_app", "0006_envelope_value_use", 3): "see 0006 above",
}


@dataclass(frozen=True)
class Step:
    """One operation of one migration, with the SQL it emits on PostgreSQL."""

    app_label: str
    migration: str
    index: int
    operation: Operation
    statements: tuple[str, ...]
    created_here: frozenset[str]  # models created earlier in the same migration
    # For a DropForeignKeyIndex: the indexes and constraints that lead with the key.
    covering: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.app_label, self.migration, self.index)


def project_app_labels() -> set[str]:
    return {
        config.label
        for config in apps.get_app_configs()
        if Path(config.path).is_relative_to(ROOT)
        and not Path(config.path).is_relative_to(ROOT / ".venv")
    }


def operation_steps(
    app_label: str,
    name: str,
    operations: list[Operation],
    state: ProjectState,
    *,
    atomic: bool = True,
) -> Iterator[Step]:
    """Each operation with the SQL it emits, applied in order from ``state``."""
    created: set[str] = set()
    for index, operation in enumerate(operations):
        statements: tuple[str, ...] = ()
        before = state.clone()
        operation.state_forwards(app_label, state)
        if operation.reduces_to_sql:
            with connection.schema_editor(collect_sql=True, atomic=atomic) as editor:
                operation.database_forwards(app_label, editor, before, state)
            statements = tuple(editor.collected_sql)
        covering = (
            led_by(state, app_label, operation.model_name_lower, operation.name)
            if isinstance(operation, DropForeignKeyIndex)
            else ()
        )
        yield Step(
            app_label, name, index, operation, statements, frozenset(created), covering
        )
        if isinstance(operation, migrations.CreateModel):
            created.add(operation.name_lower)


def led_by(state: ProjectState, app_label: str, model: str, field: str) -> tuple:
    """The composite indexes and unique constraints of ``model`` that lead with
    ``field``, in ``state``."""
    options = state.models[app_label, model].options
    return tuple(
        item.name
        for item in [*options.get("indexes", []), *options.get("constraints", [])]
        if getattr(item, "fields", None)
        and item.fields[0] == field
        and len(item.fields) > 1
        and getattr(item, "condition", None) is None
    )


def project_steps() -> list[Step]:
    loader = MigrationLoader(connection, ignore_no_migrations=True)
    labels = project_app_labels()
    leaves = [leaf for leaf in loader.graph.leaf_nodes() if leaf[0] in labels]
    plan = [
        key
        for leaf in leaves
        for key in loader.graph.forwards_plan(leaf)
        if key[0] in labels
    ]
    steps: list[Step] = []
    for app_label, name in dict.fromkeys(plan):
        migration = loader.graph.nodes[(app_label, name)]
        state = loader.project_state((app_label, name), at_end=False)
        steps += operation_steps(
            app_label, name, migration.operations, state, atomic=migration.atomic
        )
    return steps


def unsafe_because(step: Step) -> str | None:
    """Why ``step`` is not safe while old workers serve, or None."""
    operation = step.operation
    if isinstance(operation, (migrations.RunPython, migrations.RunSQL)):
        return "runs code or raw SQL: review it"
    if not step.statements or isinstance(operation, migrations.CreateModel):
        return None
    if isinstance(operation, AddIndexConcurrently):
        return None
    if isinstance(operation, DropForeignKeyIndex):
        # Concurrently, and only an index another one covers: old workers' queries
        # keep an index that serves them.
        return None if step.covering else "drops a key's index nothing else covers"
    if isinstance(operation, (migrations.AddIndex, migrations.AddConstraint)):
        if operation.model_name_lower in step.created_here:
            return None
        return "adds an index or constraint to an existing table"
    if isinstance(operation, migrations.AddField):
        field = operation.field
        if (field.null or field.db_default is not NOT_PROVIDED) and not field.unique:
            return None
        return "adds a NOT NULL column without db_default (old INSERTs fail)"
    return f"changes an existing table: {'; '.join(step.statements)}"


def test_every_migration_follows_the_rule_or_is_a_listed_exception() -> None:
    unsafe = {
        step.key: reason
        for step in project_steps()
        if (reason := unsafe_because(step)) and step.key not in EXCEPTIONS
    }

    assert unsafe == {}, (
        "Migrations that old workers may not survive (docs/deploying.md, "
        f"'The migration rule'): {unsafe}"
    )


def test_every_listed_exception_is_a_migration_that_needs_one() -> None:
    needing = {step.key for step in project_steps() if unsafe_because(step)}

    assert set(EXCEPTIONS) <= needing


def test_the_check_covers_every_app_with_migrations() -> None:
    covered = {step.app_label for step in project_steps()}

    assert covered == {"api", "sources", "sessions_app", "handoffs", "lifecycle"}


def _existing_table_ops() -> list[tuple[str, Operation, bool]]:
    """Operations on tables that exist today, and whether the rule allows them."""
    index = models.Index(fields=["principal"], name="rule_test_idx")
    return [
        (
            "sources",
            migrations.AddField("scope", "n", models.TextField(null=True)),
            True,
        ),
        (
            "sources",
            migrations.AddField("scope", "n", models.IntegerField(db_default=0)),
            True,
        ),
        (
            "sources",
            migrations.AddField("scope", "n", models.IntegerField(default=0)),
            False,
        ),
        ("sources", migrations.RemoveField("scope", "summary"), False),
        ("sources", migrations.RenameField("scope", "summary", "abstract"), False),
        (
            "sources",
            migrations.AlterField("scope", "summary", models.CharField(max_length=10)),
            False,
        ),
        ("api", migrations.AddIndex("apitoken", index), False),
        ("api", AddIndexConcurrently("apitoken", index), True),
        ("api", migrations.DeleteModel("tokengrant"), False),
        ("api", migrations.RunSQL("SELECT 1"), False),
        (
            "sources",  # sources_source_identity_uniq leads with the key
            DropForeignKeyIndex(
                "contentsource",
                "scope",
                models.ForeignKey(
                    "sources.scope",
                    on_delete=models.PROTECT,
                    related_name="sources",
                    db_index=False,
                ),
            ),
            True,
        ),
        (
            "handoffs",  # no index or constraint of the lineage leads with its Source
            DropForeignKeyIndex(
                "handofflineage",
                "source",
                models.ForeignKey(
                    "sources.contentsource",
                    on_delete=models.PROTECT,
                    related_name="handoff_lineage",
                    db_index=False,
                ),
            ),
            False,
        ),
    ]


@pytest.mark.parametrize(
    ("app_label", "operation", "allowed"),
    _existing_table_ops(),
    ids=[operation.describe() for _, operation, _ in _existing_table_ops()],
)
def test_the_rule_tells_additions_from_breaking_changes(
    app_label: str, operation: Operation, allowed: bool
) -> None:
    state = MigrationLoader(connection, ignore_no_migrations=True).project_state()

    (step,) = operation_steps(app_label, "9999_test", [operation], state, atomic=False)

    assert (unsafe_because(step) is None) is allowed, unsafe_because(step)
