"""Django's session, CSRF, auth and messages middleware - for the admin only.

The admin is the one part of the service that uses cookies: sessions, CSRF
protection, a logged-in user and flash messages. The API authenticates every
request with a bearer token and never reads a cookie, so these middlewares only
cost time there - and CSRF turned a POST to an unknown API route into Django's
HTML 403 instead of the 404 envelope (only the admin uses CSRF; docs/api.md).
Each class here is Django's own, run only for paths under the admin's prefix
(``POWERCONTEXT_ADMIN_PATH``); every other path passes straight through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.middleware import AuthenticationMiddleware
from django.contrib.messages.middleware import MessageMiddleware
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.middleware.csrf import CsrfViewMiddleware


def is_admin_path(request: HttpRequest) -> bool:
    """Whether ``request`` is for the admin (its pages, login and assets)."""
    return request.path_info.startswith(f"/{settings.POWERCONTEXT_ADMIN_PATH}")


class _AdminOnly:
    """Run the middleware it is mixed into for admin paths, pass others through."""

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_admin_path(request):
            return self.get_response(request)  # type: ignore[attr-defined]
        return super().__call__(request)  # type: ignore[misc]


class AdminSessionMiddleware(_AdminOnly, SessionMiddleware):
    pass


class AdminAuthenticationMiddleware(_AdminOnly, AuthenticationMiddleware):
    pass


class AdminMessageMiddleware(_AdminOnly, MessageMiddleware):
    pass


class AdminCsrfViewMiddleware(_AdminOnly, CsrfViewMiddleware):
    def process_view(
        self,
        request: HttpRequest,
        callback: Callable[..., Any],
        callback_args: Any,
        callback_kwargs: Any,
    ) -> HttpResponseForbidden | None:
        if not is_admin_path(request):
            return None
        return super().process_view(request, callback, callback_args, callback_kwargs)
