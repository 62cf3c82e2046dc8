"""``manage.py revoketoken PREFIX``: revoke the token whose visible prefix is PREFIX.

A prefix no token has - also one no token could have, such as an over-long or
unstorable string - is a ``CommandError``.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from powercontext.access.changes import Actor
from powercontext.access.tokens import token_revoke
from powercontext.cli import ExplainedCommand
from powercontext.exceptions import DomainError


class Command(ExplainedCommand):
    help = "Revoke an API token by its visible prefix (as shown in the admin)."
    explanation = """
        The token stops authenticating on every worker within
        POWERCONTEXT_TOKEN_CACHE_SECONDS (default 2). Its row stays, marked
        revoked with the time, for the audit; nothing is deleted. The prefix
        is the token's first characters, as the admin's API tokens list and
        createtoken's stderr show it. An unknown prefix is
        an error and nothing changes.

          .venv/bin/python manage.py revoketoken pct_AbCdEfGh
        """

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "prefix", help="The token's visible prefix, e.g. pct_AbCdEfGh."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            token = token_revoke(
                prefix=options["prefix"], actor=Actor("cli:revoketoken")
            )
        except DomainError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(
            f"Revoked {token.prefix}… ({token.principal}) "
            f"at {token.revoked_at:%Y-%m-%dT%H:%M:%SZ}."
        )
