"""``manage.py createtoken --name NAME --grant SCOPE:ROLE [...]``: mint an API token.

The token is printed once, as the last line of stdout and alone on that line, so a
script can take it with ``tail -n 1``. Bad input - a name or scope the database
cannot store, an expiry that is not in the future, a scope id that names no scope
- is a ``CommandError`` and nothing is written.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils import timezone

from powercontext.access.changes import Actor
from powercontext.access.identities import principal_name_for
from powercontext.access.scopes import granted_scopes_unknown
from powercontext.access.tokens import token_create, token_request_check
from powercontext.cli import ExplainedCommand, decimal_integer
from powercontext.exceptions import DomainError
from powercontext.principals import Role

MAX_EXPIRES_IN_DAYS = 36_500  # a century; beyond it timedelta arithmetic overflows


def parse_grant(text: str) -> tuple[str, Role]:
    scope_id, sep, role = text.rpartition(":")
    if not sep or not scope_id or role not in set(Role):
        raise CommandError(
            f"Bad --grant {text!r}: use SCOPE:ROLE, SCOPE a scope id or '*', "
            f"ROLE one of {', '.join(Role)}."
        )
    return scope_id, Role(role)


def grants_check(grants: list[tuple[str, Role]]) -> None:
    """Raise ``CommandError`` unless every granted scope is ``*`` or exists.

    Call it after ``token_request_check``: the ids it queries must be storable.
    """
    if unknown := granted_scopes_unknown(scope_id for scope_id, _ in grants):
        raise CommandError(
            f"No scope {', '.join(map(repr, unknown))}: grant an existing scope "
            "id, or '*' for every scope."
        )


def expires_at_for(days: int | None) -> datetime | None:
    """The expiry ``days`` from now (None: never); ``CommandError`` out of range."""
    if days is None:
        return None
    if not 1 <= days <= MAX_EXPIRES_IN_DAYS:
        raise CommandError(
            f"--expires-in-days must be between 1 and {MAX_EXPIRES_IN_DAYS}, "
            f"not {days}: a token must not be born expired."
        )
    return timezone.now() + timedelta(days=days)


class Command(ExplainedCommand):
    help = "Mint an API token with grants; prints the token as the last line."
    explanation = """
        Creates a bearer token acting as the principal --name (an existing
        one, whose tokens share its grants, or a new one; the names
        static-token, local, system, seed, migration, admin:... and cli:...
        are reserved)
        with a role (viewer, contributor or admin; docs/api.md) on each
        granted scope, '*' meaning
        every scope; --expires-in-days limits its life. Only a hash of
        the token is stored: the token itself is printed once, alone on the
        last line of stdout (a script can take it with tail -n 1); its visible
        prefix, for revoketoken and the admin, goes to stderr. Bad input is an
        error and nothing is written.

          .venv/bin/python manage.py createtoken --name ci-bot --grant '*:contributor'
          .venv/bin/python manage.py createtoken --name reader \\
              --grant scp_0123...:viewer --expires-in-days 30
        """

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
                "Grant, repeatable: SCOPE is an existing scope id or '*', "
                "ROLE viewer|contributor|admin."
            ),
        )
        parser.add_argument(
            "--expires-in-days",
            type=decimal_integer,
            default=None,
            help=f"Expire the token after N days, 1..{MAX_EXPIRES_IN_DAYS}.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        name = options["name"].strip()
        grants = [parse_grant(text) for text in options["grant"]]
        if not grants:
            raise CommandError(
                "Give at least one --grant SCOPE:ROLE (for example '*:admin')."
            )
        expires_at = expires_at_for(options["expires_in_days"])
        try:
            # An operator names any principal, existing or new, but a reserved one.
            name = principal_name_for(requested=name, owner=None)
            token_request_check(
                principal=name,
                grants=grants,
                expires_at=expires_at,
                now=timezone.now(),
            )
            grants_check(grants)
            token, raw = token_create(
                principal=name,
                grants=grants,
                expires_at=expires_at,
                actor=Actor("cli:createtoken"),
            )
        except DomainError as exc:
            raise CommandError(exc.message) from None
        summary = ", ".join(f"{scope}:{role}" for scope, role in grants)
        self.stderr.write(
            f"Minted token {token.prefix}… for {name!r} with grants {summary}."
        )
        self.stderr.write("It is shown once; store it now.")
        self.stdout.write(raw)
