"""Rows written once: the model and queryset layers of every append-only table.

Immutability is guarded in layers (docs/architecture.md): one writer service per table;
``save()`` only inserts; the queryset refuses ``update()``, ``delete()`` and
``bulk_update()``; the admin is read-only; and on PostgreSQL triggers refuse
UPDATE, DELETE and TRUNCATE from any client (``powercontext.db.guards``).

``ImmutableModel`` rows are never changed or deleted. ``AppendOnlyModel`` rows
are never changed, and deleted only by retention pruning, through the explicitly
named ``delete_pruned()``.
"""

from __future__ import annotations

from typing import Any

from django.db import models


class ImmutableRecordError(RuntimeError):
    """A code path tried to change or delete a row that is written once."""


class ImmutableQuerySet(models.QuerySet):
    """Bulk ``update()``, ``delete()`` and ``bulk_update()`` are refused."""

    def update(self, **kwargs: Any) -> int:
        raise ImmutableRecordError(f"{self.model.__name__} rows are never updated")

    def delete(self) -> tuple[int, dict[str, int]]:
        raise ImmutableRecordError(f"{self.model.__name__} rows are never deleted")

    def bulk_update(self, *args: Any, **kwargs: Any) -> int:
        raise ImmutableRecordError(f"{self.model.__name__} rows are never updated")


class AppendOnlyQuerySet(ImmutableQuerySet):
    """As ``ImmutableQuerySet``; retention pruning deletes with ``delete_pruned``."""

    def delete_pruned(self) -> tuple[int, dict[str, int]]:
        """Delete these rows; only retention pruning calls this."""
        return models.QuerySet.delete(self)


class _WrittenOnce(models.Model):
    """``save()`` only inserts; ``delete()`` is refused."""

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ImmutableRecordError(f"{type(self).__name__} rows are never updated")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise ImmutableRecordError(f"{type(self).__name__} rows are never deleted")


class ImmutableModel(_WrittenOnce):
    """Rows never changed or deleted."""

    objects = ImmutableQuerySet.as_manager()

    class Meta:
        abstract = True


class AppendOnlyModel(_WrittenOnce):
    """Rows never changed; old ones deleted only by retention pruning."""

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True
