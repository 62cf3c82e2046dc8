"""PostgreSQL triggers that keep append-only tables append-only, generated here.

The last layer of immutability under the models, querysets and the read-only
admin: it holds for raw SQL, ``psql`` sessions and any code path that bypasses
the models. Migrations build their statements with these functions, so every
guard is the same SQL with a different name:

- ``refusing_function`` - a trigger function that raises for any operation it
  guards (``rows of <table> are immutable: <OP> refused``);
- ``row_guard`` - ``BEFORE UPDATE OR DELETE ... FOR EACH ROW``;
- ``truncate_guard`` - ``BEFORE TRUNCATE ... FOR EACH STATEMENT`` (row triggers
  never see a TRUNCATE);
- ``on_postgresql`` - a ``RunPython`` operation running statements only there;
- ``tombstone_guard`` - the registry's row trigger, on PostgreSQL and SQLite
  alike: DELETE refused, and UPDATE refused unless it is exactly the one
  tombstone change (docs/api.md; docs/decisions/0013-tombstones.md).

Django's ``flush`` (the test suite between transactional tests, or an operator
emptying a database) truncates every table; the project's PostgreSQL backend runs
it with ``session_replication_role = replica``, which skips ordinary triggers and
which only a superuser may set. SQLite has no TRUNCATE and relies on the layers
above, but for the registry's tombstone guard, which is a trigger there too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import migrations


def refusing_function(name: str, *, verb: str = "immutable") -> tuple[str, str]:
    """``CREATE`` and ``DROP`` of a trigger function refusing what it guards."""
    create = f"""
    CREATE OR REPLACE FUNCTION {name}() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'rows of % are {verb}: % refused', TG_TABLE_NAME, TG_OP
            USING ERRCODE = 'P0001';
    END
    $$;
    """
    return create, f"DROP FUNCTION IF EXISTS {name}();"


def row_guard(
    table: str, function: str, *, operations: str = "UPDATE OR DELETE"
) -> tuple[str, str]:
    """A row trigger running ``function`` before ``operations`` on ``table``."""
    create = f"""
    CREATE TRIGGER {table}_immutable
    BEFORE {operations} ON {table}
    FOR EACH ROW EXECUTE FUNCTION {function}();
    """
    return create, f"DROP TRIGGER IF EXISTS {table}_immutable ON {table};"


def truncate_guard(table: str, function: str) -> tuple[str, str]:
    """A statement trigger running ``function`` before a TRUNCATE of ``table``."""
    create = f"""
    CREATE TRIGGER {table}_no_truncate
    BEFORE TRUNCATE ON {table}
    FOR EACH STATEMENT EXECUTE FUNCTION {function}();
    """
    return create, f"DROP TRIGGER IF EXISTS {table}_no_truncate ON {table};"


def guards(
    function: tuple[str, str], triggers: Iterable[tuple[str, str]]
) -> tuple[list[str], list[str]]:
    """Forward statements (the function, then its triggers) and their reverse."""
    made = list(triggers)
    forward = [function[0], *(create for create, _ in made)]
    backward = [*(drop for _, drop in reversed(made)), function[1]]
    return forward, backward


def on_postgresql(
    forward: Sequence[str], backward: Sequence[str]
) -> migrations.RunPython:
    """A migration operation executing ``forward`` (``backward`` to reverse) on
    PostgreSQL and doing nothing on other engines."""

    def run(statements: Sequence[str]):  # type: ignore[no-untyped-def]
        def apply(apps, schema_editor):  # type: ignore[no-untyped-def]
            if schema_editor.connection.vendor != "postgresql":
                return
            for statement in statements:
                schema_editor.execute(statement, params=None)

        return apply

    return migrations.RunPython(run(forward), run(backward))


@dataclass(frozen=True)
class Tombstone:
    """The one change a tombstone guard allows: ``cleared`` columns become NULL,
    ``zeroed`` ones 0, ``stamped`` ones go from NULL to a value (once), and every
    ``kept`` column stays as it was."""

    kept: Sequence[str]
    cleared: Sequence[str]
    zeroed: Sequence[str]
    stamped: Sequence[str]

    def allowed(self, same: str) -> str:
        """The SQL condition (``same`` is the null-safe equality operator)."""
        return " AND ".join(
            [
                *(f"OLD.{column} IS NULL" for column in self.stamped),
                *(f"NEW.{column} IS NOT NULL" for column in self.stamped),
                *(f"NEW.{column} IS NULL" for column in self.cleared),
                *(f"NEW.{column} = 0" for column in self.zeroed),
                *(f"NEW.{column} {same} OLD.{column}" for column in self.kept),
            ]
        )


def tombstone_guard(
    table: str, function: str, tombstone: Tombstone, *, vendor: str
) -> tuple[list[str], list[str]]:
    """Forward and backward statements of ``table``'s tombstone guard on ``vendor``
    (``postgresql``: a function and a row trigger replacing ``row_guard``'s;
    ``sqlite``: a ``BEFORE UPDATE`` trigger - SQLite's flush deletes rows, so
    DELETE stays refused there by the model layers only)."""
    if vendor == "postgresql":
        create = f"""
        CREATE OR REPLACE FUNCTION {function}() RETURNS trigger
        LANGUAGE plpgsql AS $$
        BEGIN
            IF TG_OP = 'UPDATE' AND {tombstone.allowed("IS NOT DISTINCT FROM")} THEN
                RETURN NEW;
            END IF;
            RAISE EXCEPTION 'rows of % are immutable: % refused', TG_TABLE_NAME, TG_OP
                USING ERRCODE = 'P0001';
        END
        $$;
        """
        trigger, drop_trigger = row_guard(table, function)
        return (
            [create, drop_trigger, trigger],
            [drop_trigger, f"DROP FUNCTION IF EXISTS {function}();"],
        )
    create = f"""
    CREATE TRIGGER {table}_tombstone_only
    BEFORE UPDATE ON {table} FOR EACH ROW
    WHEN NOT ({tombstone.allowed("IS")})
    BEGIN
        SELECT RAISE(ABORT, 'rows of {table} are immutable: UPDATE refused');
    END;
    """
    return [create], [f"DROP TRIGGER IF EXISTS {table}_tombstone_only;"]


def on_vendor(
    vendor: str, forward: Sequence[str], backward: Sequence[str]
) -> migrations.RunPython:
    """A migration operation executing ``forward`` (``backward`` to reverse) on
    ``vendor`` only."""

    def run(statements: Sequence[str]):  # type: ignore[no-untyped-def]
        def apply(apps, schema_editor):  # type: ignore[no-untyped-def]
            if schema_editor.connection.vendor != vendor:
                return
            for statement in statements:
                schema_editor.execute(statement, params=None)

        return apply

    return migrations.RunPython(run(forward), run(backward))
