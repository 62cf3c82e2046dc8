"""The admin site: Django's, with failed logins limited and logged.

docs/operations.md: failed admin logins are rate limited per client address
(``POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES``, the same budget as failed API
authentication but counted apart) and logged. A login is checked before it is
tried - so a password guessed right after the limit is still refused - and counted
only when it fails. ``POWERCONTEXT_ADMIN_ENABLED`` and ``POWERCONTEXT_ADMIN_PATH``
(``powercontext/urls.py``) turn the admin off or move it.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.admin import AdminSite
from django.contrib.admin.apps import AdminConfig as DjangoAdminConfig
from django.contrib.auth.signals import user_login_failed
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from .ratelimit import auth_failure_rate, client_address, limit

logger = logging.getLogger("powercontext.admin")


def _bucket(request: HttpRequest) -> str:
    return f"admin-login:{client_address(request)}"


class PowerContextAdminSite(AdminSite):
    site_header = "powercontext audit console"
    site_title = "powercontext"

    def login(self, request: HttpRequest, extra_context: Any = None) -> HttpResponse:
        if request.method == "POST":
            decision = limit(_bucket(request), auth_failure_rate(), count=False)
            if not decision.allowed:
                logger.warning(
                    "admin login refused: too many failures from %s",
                    client_address(request),
                )
                response = TemplateResponse(
                    request,
                    "admin/login_limited.html",
                    {**self.each_context(request), "retry_after": decision.retry_after},
                    status=429,
                )
                response["Retry-After"] = str(decision.retry_after)
                return response
        return super().login(request, extra_context)


class AdminConfig(DjangoAdminConfig):
    default_site = "powercontext.api.admin_site.PowerContextAdminSite"


@receiver(user_login_failed)
def _count_failed_login(
    sender: Any, credentials: dict[str, Any], request: HttpRequest | None, **kwargs: Any
) -> None:
    """Log a failed admin login (never the password) and count it."""
    if request is None:
        return
    logger.warning(
        "admin login failed: username=%r from %s",
        credentials.get("username"),
        client_address(request),
    )
    limit(_bucket(request), auth_failure_rate())
