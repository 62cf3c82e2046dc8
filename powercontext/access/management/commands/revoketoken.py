"""``manage.py revoketoken PREFIX``: revoke the token whose visible prefix is PREFIX.

A prefix no token has - also one no token could have, such as an over-long or
unstorable string - is a ``CommandError``.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from powercontext.access.changes import Actor
from powercontext.access.tokens import token_revoke
from powercontext.exceptions import DomainError


class Command(BaseCommand):
    help = "Revoke an API token by its visible prefix (as shown in the admin)."

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
