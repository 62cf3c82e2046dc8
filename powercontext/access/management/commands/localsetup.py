"""``manage.py localsetup``: what ``make run`` prints before serving.

Keeps one local token (``*:admin``, principal ``local``): the one saved in
``var/local_token`` (mode 0600) is printed again while it still authenticates and
nothing is set to end it - no expiry, no revocation scheduled by a rotation's
grace; otherwise a new one is minted and saved. Every other unrevoked token of the
principal ``local`` is revoked (one rotated away in its grace included), so
restarts never pile up admin tokens and the token printed outlives any grace. The
local admin user ``admin`` gets a fresh password on every run, printed once.
The URLs printed follow ``POWERCONTEXT_BIND``, as the server does.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandParser

from powercontext.access.changes import Actor
from powercontext.access.models import ApiToken
from powercontext.access.tokens import (
    VISIBLE_PREFIX_LENGTH,
    TokenRejected,
    token_authenticate,
    token_create,
    token_revoke,
)
from powercontext.cli import ExplainedCommand
from powercontext.principals import ALL_SCOPES, Grant, Role

LOCAL_PRINCIPAL = "local"
DEFAULT_BIND = "127.0.0.1:8000"


def base_url_for(bind: str) -> tuple[str, str]:
    """How this machine reaches a server's ``bind`` address: (base URL, curl
    options). A wildcard address is shown as loopback."""
    if bind.startswith("unix:"):
        return "http://localhost", f"--unix-socket {bind[len('unix:') :]} "
    host, _, port = bind.rpartition(":") if ":" in bind else (bind, ":", "8000")
    wildcards = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "[::]": "[::1]"}  # noqa: S104
    return f"http://{wildcards.get(host, host)}:{port}", ""


def local_token(path: Path) -> str:
    """The saved local token while it still authenticates as ``local`` with
    ``*:admin`` and nothing ends it (``_lasting``); otherwise a newly minted one,
    saved to ``path``."""
    if path.exists():
        raw = path.read_text().strip()
        try:
            principal = token_authenticate(raw)
        except TokenRejected:
            principal = None
        if (
            principal is not None
            and principal.name == LOCAL_PRINCIPAL
            and (Grant(ALL_SCOPES, Role.ADMIN) in principal.grants)
            and principal.token_id is not None
            and _lasting(principal.token_id)
        ):
            return raw
    _, raw = token_create(
        principal=LOCAL_PRINCIPAL,
        grants=[(ALL_SCOPES, Role.ADMIN)],
        actor=Actor("cli:localsetup"),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600)
    path.chmod(0o600)  # also when it existed
    path.write_text(raw + "\n")
    return raw


def _lasting(token_id: int) -> bool:
    """Whether token ``token_id`` has neither an expiry nor a scheduled revocation:
    a token rotated away still authenticates until its grace ends (``revoked_at``
    in the future), and printing it would hand out a secret about to die."""
    return ApiToken.objects.filter(
        pk=token_id, expires_at__isnull=True, revoked_at__isnull=True
    ).exists()


def other_local_tokens_revoke(keep: str) -> int:
    """Revoke every unrevoked ``local`` token but ``keep``; return how many."""
    prefixes = list(
        ApiToken.objects.filter(principal=LOCAL_PRINCIPAL, revoked=False)
        .exclude(prefix=keep[:VISIBLE_PREFIX_LENGTH])
        .values_list("prefix", flat=True)
    )
    for prefix in prefixes:
        token_revoke(prefix=prefix, actor=Actor("cli:localsetup"))
    return len(prefixes)


class Command(ExplainedCommand):
    help = (
        "Print the local *:admin token (reused while valid) and a fresh admin "
        "password; revoke older local tokens."
    )
    explanation = """
        For development: make run calls it before serving. It keeps one API
        token for the principal 'local' with *:admin in var/local_token (mode
        0600), printed again while it still authenticates and nothing ends it
        (an expiry, a rotation's grace) and minted anew otherwise; revokes
        every other unrevoked 'local' token; and gives the
        admin user 'admin' a new password, printed once. The URLs it prints
        follow --bind or POWERCONTEXT_BIND, as the server binds. Never run it
        against a production database: it creates an admin login.
        """

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--bind",
            default=None,
            help=(
                "the server's bind address, for the URLs printed "
                f"(default: POWERCONTEXT_BIND, else {DEFAULT_BIND})."
            ),
        )
        parser.add_argument(
            "--token-file",
            type=Path,
            default=None,
            help="Where the local token is kept (default: var/local_token).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        bind = options["bind"] or os.environ.get("POWERCONTEXT_BIND", DEFAULT_BIND)
        base_url, curl_options = base_url_for(bind)
        token_file = options["token_file"] or Path(settings.VAR_DIR) / "local_token"
        raw = local_token(token_file)
        revoked = other_local_tokens_revoke(raw)
        password = self._admin_password_reset()
        self.stdout.write(
            "\n".join(
                [
                    "",
                    "powercontext is starting on " + base_url,
                    "",
                    f"  API token (*:admin, kept in {token_file}, reused by every "
                    "make run):",
                    f"    {raw}",
                    "  Try it:",
                    f"    curl -s {curl_options}-H 'Authorization: Bearer "
                    + raw
                    + f"' {base_url}/v1/scopes",
                    "",
                    f"  Admin: {base_url}/admin/  user: admin",
                    f"         password (new on every make run): {password}",
                    f"  API docs: {base_url}/docs",
                    "",
                ]
            )
        )
        if revoked:
            self.stderr.write(f"Revoked {revoked} older local token(s).")

    def _admin_password_reset(self) -> str:
        password = secrets.token_urlsafe(12)
        user_model = get_user_model()
        user = user_model.objects.filter(username="admin").first()
        if user is None:
            user_model.objects.create_superuser("admin", email="", password=password)
        else:
            user.set_password(password)
            user.is_superuser = user.is_staff = user.is_active = True
            user.save()
        return password
