"""Rate limits and the cache that counts them (docs/api.md; docs/operations.md,
"Rate limits and Redis").

Imported by ``base.py``. Each limit is N/s, N/min or off; shared by every worker
and server through Redis when POWERCONTEXT_CACHE_URL is set (Django's RedisCache),
per worker without it.
"""

from powercontext.rates import LEASE_MAX_DEFAULT, parse_rate
from powercontext.settings.envfile import SettingsEnv, settings_error

env = SettingsEnv()

POWERCONTEXT_RATE_LIMIT_WRITE = env.str(
    "POWERCONTEXT_RATE_LIMIT_WRITE", default="200/s"
)
POWERCONTEXT_RATE_LIMIT_READ = env.str("POWERCONTEXT_RATE_LIMIT_READ", default="400/s")
POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES = env.str(
    "POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES", default="30/min"
)
# A header the proxy in front sets to the client's address (e.g. X-Real-IP); the
# peer's address is used without it.
POWERCONTEXT_CLIENT_ADDRESS_HEADER = env.str(
    "POWERCONTEXT_CLIENT_ADDRESS_HEADER", default=""
)
for _name in (
    "POWERCONTEXT_RATE_LIMIT_WRITE",
    "POWERCONTEXT_RATE_LIMIT_READ",
    "POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES",
):
    try:
        parse_rate(globals()[_name])
    except ValueError as exc:
        raise settings_error(_name, str(exc)) from None
# Under a high limit one decision in Redis takes up to this many requests for its
# worker to spend (powercontext.rates, Rate.lease); 1: every request asks.
POWERCONTEXT_RATE_LIMIT_LEASE_MAX = env.int(
    "POWERCONTEXT_RATE_LIMIT_LEASE_MAX",
    default=LEASE_MAX_DEFAULT,
    minimum=1,
    maximum=1000,
)
POWERCONTEXT_CACHE_URL = env.str("POWERCONTEXT_CACHE_URL", default="")
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "ratelimit": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": POWERCONTEXT_CACHE_URL,
            "KEY_PREFIX": "powercontext",
            # An unreachable Redis must cost a request milliseconds, not seconds.
            "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2},
        }
        if POWERCONTEXT_CACHE_URL
        else {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "ratelimit",
        }
    ),
}
