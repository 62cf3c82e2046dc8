"""Exporting a scope (or one session of it): its bundle and the export record."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from sessions_app.models import SessionEnvelope
from sources.models import ContentSource, SessionClosure
from sources.selectors import scope_require

from ..bundles.export import ExportSummary, Selection, bundle_lines
from ..bundles.format import FORMAT_VERSION
from ..exceptions import SessionNotFound
from ..models import ExportRecord


def scope_export(
    *,
    scope_id: str,
    session_id: str | None,
    exported_by: str,
    via: str,
    request_id: str,
) -> Iterator[bytes]:
    """The bundle of a scope, or of one of its sessions, line by line
    (``lifecycle.bundles.export.bundle_lines``), and its ``ExportRecord``
    written before the trailer.

    Checks before the first line: raises ``ScopeNotFound``, or
    ``SessionNotFound`` for a session with no note, envelope or closure in the
    scope. A scope or session under a legal hold is exported like any other.
    """
    scope_require(scope_id=scope_id)
    selection = Selection(scope_id, session_id)
    if session_id is not None and not _session_known(scope_id, session_id):
        raise SessionNotFound()
    created_at = timezone.now()

    def record(summary: ExportSummary) -> None:
        export_record_write(
            selection=selection,
            summary=summary,
            exported_by=exported_by,
            exported_at=created_at,
            via=via,
            request_id=request_id,
        )

    return bundle_lines(selection=selection, created_at=created_at, finished=record)


def _session_known(scope_id: str, session_id: str) -> bool:
    where = {"scope_id": scope_id, "session_id": session_id}
    return (
        ContentSource.objects.filter(**where).exists()
        or SessionEnvelope.objects.filter(**where).exists()
        or SessionClosure.objects.filter(**where).exists()
    )


def export_record_write(
    *,
    selection: Selection,
    summary: ExportSummary,
    exported_by: str,
    exported_at: datetime,
    via: str,
    request_id: str,
) -> ExportRecord:
    """Append the record of a finished export (its own durable transaction).

    Called after the export's snapshot transaction has ended and before the
    trailer is sent, so every complete bundle has its record.
    """
    with transaction.atomic(durable=True):
        return ExportRecord.objects.create(
            scope_id=selection.scope_id,
            session_id=selection.session_id,
            exported_by=exported_by,
            exported_at=exported_at,
            finished_at=timezone.now(),
            via=via,
            format_version=FORMAT_VERSION,
            records=summary.records,
            counts=summary.counts,
            chain=summary.chain,
            request_id=request_id,
        )
