"""``manage.py prune_envelope_revisions``: apply ``SESSION_REVISION_RETENTION``.

Run it from cron (e.g. daily). It deletes envelope revisions older than the
retention - never an envelope's latest revision - and the stored values no
remaining revision references, one envelope per short transaction.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from sessions_app.services import envelope_revisions_prune


class Command(BaseCommand):
    help = (
        "Delete envelope revisions older than SESSION_REVISION_RETENTION "
        "(never an envelope's latest) and the values no revision references."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        result = envelope_revisions_prune()
        self.stdout.write(
            f"Pruned {result.revisions} revisions and {result.values} stored values "
            f"of {result.envelopes} envelopes "
            f"(retention {settings.SESSION_REVISION_RETENTION.days} days)."
        )
