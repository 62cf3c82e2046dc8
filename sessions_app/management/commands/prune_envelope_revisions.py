"""``manage.py prune_envelope_revisions``: apply ``SESSION_REVISION_RETENTION``.

Run it from cron (e.g. daily). It deletes envelope revisions older than the
retention - never an envelope's latest revision - and the stored values no
remaining revision references, one envelope per short transaction, printing
progress on stderr and one summary line on stdout.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from powercontext.cli import ExplainedCommand, ProgressLines
from sessions_app.services import envelope_revisions_prune


class Command(ExplainedCommand):
    help = (
        "Delete envelope revisions older than SESSION_REVISION_RETENTION "
        "(never an envelope's latest, nothing of a held one) and the values no "
        "revision references."
    )
    explanation = """
        Envelope revisions are the audit trail of every envelope write
        (docs/decisions/0101). They are kept SESSION_REVISION_RETENTION days
        (default 30); this command deletes older ones, except each envelope's
        latest revision, and then the stored values no remaining revision
        references. An envelope under a legal hold (its scope or its session)
        keeps every revision until the hold is released. Each envelope is
        pruned in its own short transaction under its row lock, so envelope
        writes go on while it runs and an interrupted run can simply be started
        again.

        Prints how many envelopes have revisions to prune and its progress on
        stderr, then one summary line on stdout. Run it daily, e.g. from cron
        in the service's directory:

          .venv/bin/python manage.py prune_envelope_revisions
        """

    def handle(self, *args: Any, **options: Any) -> None:
        result = envelope_revisions_prune(
            progress=ProgressLines(self.stderr, unit="envelopes pruned")
        )
        self.stdout.write(
            f"Pruned {result.revisions} revisions and {result.values} stored values "
            f"of {result.envelopes} envelopes; {result.skipped_held} held envelopes "
            f"kept whole (retention {settings.SESSION_REVISION_RETENTION.days} days)."
        )
