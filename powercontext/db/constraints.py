"""Database helpers shared by services."""

from __future__ import annotations

from django.db import IntegrityError, models


def violates_constraint(
    exc: IntegrityError, model: type[models.Model], name: str
) -> bool:
    """Whether ``exc`` was raised by ``model``'s constraint called ``name``.

    PostgreSQL reports the constraint name; SQLite only lists the columns
    (``UNIQUE constraint failed: table.col, ...``), so those are compared instead.
    """
    diag = getattr(exc.__cause__, "diag", None)
    if diag is not None and getattr(diag, "constraint_name", None):
        return diag.constraint_name == name
    constraint = next(c for c in model._meta.constraints if c.name == name)
    table = model._meta.db_table
    columns = {
        f"{table}.{model._meta.get_field(field).column}"  # type: ignore[union-attr]
        for field in constraint.fields  # type: ignore[attr-defined]
    }
    _, _, failed = str(exc).partition("constraint failed: ")
    return {column.strip() for column in failed.split(",")} == columns
