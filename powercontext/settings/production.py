"""Production settings: secrets are required, HTTPS is enforced by default.

The env file is read first (``envfile``). Behind a TLS-terminating proxy the WSGI
layer in front of Django (``powercontext.api.wsgi_head``) marks a request HTTPS
when the proxy, from an address in ``FORWARDED_ALLOW_IPS``,
sends ``X-Forwarded-Proto: https``; ``DJANGO_SECURE_PROXY_SSL_HEADER`` would make
Django believe that header from anyone, so it stays off (docs/deploying.md). The
health paths are exempt from the HTTPS redirect so load balancers can probe over
plain HTTP.
"""

from .envfile import env_file_read, settings_error

env_file_read()

from .base import *  # noqa: E402, F403
from .base import env  # noqa: E402

DEBUG = False
if POWERCONTEXT_AUTH_MODE == "disabled":  # noqa: F405
    raise settings_error("POWERCONTEXT_AUTH_MODE", "disabled is refused here.")
SECRET_KEY = env.str("DJANGO_SECRET_KEY", default="")
if len(SECRET_KEY) < 50:
    raise settings_error(
        "DJANGO_SECRET_KEY",
        "must be set to at least 50 random characters; generate "
        "one with: .venv/bin/python -c 'import secrets; "
        "print(secrets.token_urlsafe(50))'",
    )
if any(len(key) < 50 for key in SECRET_KEY_FALLBACKS):  # noqa: F405
    raise settings_error(
        "DJANGO_SECRET_KEY_FALLBACKS", "every key must have at least 50 characters."
    )
if "DATABASE_URL" not in env:
    raise settings_error("DATABASE_URL", "must be set in production.")

SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
SECURE_HSTS_SECONDS = env.int(
    "DJANGO_SECURE_HSTS_SECONDS", default=31_536_000, minimum=0
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool(
    "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True
)
SECURE_HSTS_PRELOAD = env.bool("DJANGO_SECURE_HSTS_PRELOAD", default=False)
# Django's CSRF middleware runs for the admin only (a subclass,
# powercontext.api.admin_middleware): the API never reads a cookie, every request
# carries a bearer token, and CSRF answered API 404s with an HTML 403.
SILENCED_SYSTEM_CHECKS = ["security.W003"]
if not SECURE_HSTS_PRELOAD:
    # Preloading is a one-way commitment for the whole domain; leave it to operators.
    SILENCED_SYSTEM_CHECKS.append("security.W021")
SESSION_COOKIE_SECURE = env.bool("DJANGO_SESSION_COOKIE_SECURE", default=True)
CSRF_COOKIE_SECURE = env.bool("DJANGO_CSRF_COOKIE_SECURE", default=True)
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])
if env.bool("DJANGO_SECURE_PROXY_SSL_HEADER", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
USE_X_FORWARDED_HOST = env.bool("DJANGO_USE_X_FORWARDED_HOST", default=False)
