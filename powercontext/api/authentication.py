"""DRF authentication: ``Authorization: Bearer <token>``.

Order of acceptance: ``POWERCONTEXT_AUTH_MODE=disabled`` (local development only,
every caller is a local admin); the static ``POWERCONTEXT_SERVER_AUTH_TOKEN``
(the reference's single-token mode, ``*:admin``); a minted token from the database.
"""

from __future__ import annotations

import hmac
import logging

from django.conf import settings
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import (
    AuthenticationFailed,
    NotAuthenticated,
    Throttled,
)
from rest_framework.request import Request

from powercontext.access.tokens import TokenRejected, token_authenticate
from powercontext.principals import (
    LOCAL_PRINCIPAL,
    STATIC_TOKEN_PRINCIPAL,
    Principal,
    superuser_principal,
)

from .ratelimit import auth_failure_rate, client_address, limit

logger = logging.getLogger("powercontext.auth")

_LOCAL = superuser_principal(LOCAL_PRINCIPAL)
_STATIC = superuser_principal(STATIC_TOKEN_PRINCIPAL)


def auth_disabled() -> bool:
    """Disabled mode only ever applies with DEBUG on (settings refuse it otherwise)."""
    return settings.POWERCONTEXT_AUTH_MODE == "disabled" and settings.DEBUG


def _failed(request: Request) -> None:
    """Count a failed authentication of the caller's address; 429 over the limit
    (``POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES``), otherwise the caller's 401."""
    decision = limit(f"auth:{client_address(request)}", auth_failure_rate())
    if not decision.allowed:
        logger.warning(
            "authentication failures over the limit from %s",
            client_address(request),
        )
        raise Throttled(wait=decision.retry_after)


class BearerTokenAuthentication(BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Principal, str | None] | None:
        if auth_disabled():
            return _LOCAL, None
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if not header:
            _failed(request)
            raise NotAuthenticated()
        scheme, _, raw = header.partition(" ")
        raw = raw.strip()
        if scheme.lower() != "bearer" or not raw:
            _failed(request)
            raise AuthenticationFailed(
                "The Authorization header must be 'Bearer <token>'."
            )
        static = settings.POWERCONTEXT_SERVER_AUTH_TOKEN
        if static and hmac.compare_digest(raw.encode(), static.encode()):
            return _STATIC, raw
        try:
            principal = token_authenticate(raw)
        except TokenRejected as rejected:
            logger.info("token rejected: %s", rejected)
            _failed(request)
            raise AuthenticationFailed(
                "The bearer token is unknown, revoked or expired."
            ) from None
        return principal, raw

    def authenticate_header(self, request: Request) -> str:
        return self.keyword
