"""``manage.py createtoken --name NAME --grant SCOPE:ROLE [...]``: mint an API token.

The token is printed once, as the last line of stdout and alone on that line, so a
script can take it with ``tail -n 1``.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from powercontext.api.models import Role
from powercontext.api.tokens import token_create


def parse_grant(text: str) -> tuple[str, Role]:
    scope_id, sep, role = text.rpartition(":")
    if not sep or not scope_id or role not in Role.values:
        raise CommandError(
            f"Bad --grant {text!r}: use SCOPE:ROLE, SCOPE a scope id or '*', "
            f"ROLE one of {', '.join(Role.values)}."
        )
    return scope_id, Role(role)


class Command(BaseCommand):
    help = "Mint an API token with grants; prints the token as the last line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--name", required=True, help="Principal name the token acts as."
        )
        parser.add_argument(
            "--grant",
            action="append",
            default=[],
            metavar="SCOPE:ROLE",
            help=(
                "Grant, repeatable: SCOPE is a scope id or '*', "
                "ROLE viewer|contributor|admin."
            ),
        )
        parser.add_argument(
            "--expires-in-days",
            type=int,
            default=None,
            help="Expire the token after N days.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"].strip()
        if not name:
            raise CommandError("--name must not be blank.")
        grants = [parse_grant(text) for text in options["grant"]]
        if not grants:
            raise CommandError(
                "Give at least one --grant SCOPE:ROLE (for example '*:admin')."
            )
        expires_at = None
        if options["expires_in_days"] is not None:
            expires_at = timezone.now() + timedelta(days=options["expires_in_days"])
        token, raw = token_create(principal=name, grants=grants, expires_at=expires_at)
        summary = ", ".join(f"{scope}:{role}" for scope, role in grants)
        self.stderr.write(
            f"Minted token {token.prefix}… for {name!r} with grants {summary}."
        )
        self.stderr.write("It is shown once; store it now.")
        self.stdout.write(raw)
