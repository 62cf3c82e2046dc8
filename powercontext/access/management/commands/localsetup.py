"""``manage.py localsetup``: what ``make run`` prints before serving.

Mints a fresh local token (``*:admin``) and gives the local admin user ``admin`` a
new one-time password. Both are printed once and never stored in clear.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from powercontext.access.tokens import token_create
from powercontext.principals import Role


class Command(BaseCommand):
    help = "Mint a local token and reset the local admin password; print both once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")

    def handle(self, *args: Any, **options: Any) -> None:
        base_url = options["base_url"].rstrip("/")
        _, raw = token_create(principal="local", grants=[("*", Role.ADMIN)])
        password = secrets.token_urlsafe(12)
        user_model = get_user_model()
        user = user_model.objects.filter(username="admin").first()
        if user is None:
            user = user_model.objects.create_superuser(
                "admin", email="", password=password
            )
        else:
            user.set_password(password)
            user.is_superuser = user.is_staff = user.is_active = True
            user.save()
        self.stdout.write(
            "\n".join(
                [
                    "",
                    "powercontext is starting on " + base_url,
                    "",
                    "  API token (*:admin, shown once):",
                    f"    {raw}",
                    "  Try it:",
                    "    curl -s -H 'Authorization: Bearer "
                    + raw
                    + f"' {base_url}/v1/scopes",
                    "",
                    f"  Admin: {base_url}/admin/  user: admin",
                    f"         password (one-time): {password}",
                    f"  API docs: {base_url}/docs",
                    "",
                ]
            )
        )
