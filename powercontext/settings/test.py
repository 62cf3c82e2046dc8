"""Settings for the test suite: ``DATABASE_URL`` picks PostgreSQL or SQLite.

Tests open plain connections (no pool): pytest-django creates and drops the test
database, and concurrency tests close each thread's connection themselves.
"""

from .base import *  # noqa: F403
from .base import DATABASES

SECRET_KEY = "test-secret-key-not-for-production-0123456789-abcdefghijklmnop"  # noqa: S105
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Static files come from the app finders in tests (no collectstatic run).
STATIC_ROOT = None
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True

DATABASES["default"].get("OPTIONS", {}).pop("pool", None)
DATABASES["default"]["CONN_MAX_AGE"] = 0

# Tests change tokens directly in the database; the token cache has tests of its own
# (tests/api/test_token_cache.py) that turn it on.
POWERCONTEXT_TOKEN_CACHE_SECONDS = 0.0

# Tests send requests faster than any client would; the rate-limit tests turn the
# limits on (tests/api/test_rate_limits.py).
POWERCONTEXT_RATE_LIMIT_WRITE = "off"
POWERCONTEXT_RATE_LIMIT_READ = "off"
POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES = "off"
