"""Rate-limit decisions in Redis (powercontext.api.ratelimit, decision 0010): GCRA
run as one script on Redis's clock, a connection per thread, leases under high
limits, fail open while Redis is unreachable."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
import time
from typing import Any

from django.conf import settings
from django.core.cache.backends.redis import RedisCache
from redis import ConnectionPool
from redis.connection import ConnectionInterface
from redis.exceptions import NoScriptError

from powercontext import metrics
from powercontext.rates import Rate

CACHE_ALIAS = "ratelimit"  # powercontext.settings.ratelimits
# OPTIONS that Django's RedisCache takes for itself, not for the connection.
DJANGO_CLIENT_OPTIONS = ("parser_class", "pool_class", "serializer")

logger = logging.getLogger("powercontext.ratelimit")

# Retry Redis this long after it failed, instead of paying its timeout per request.
REDIS_BACKOFF_SECONDS = 5.0
LOG_EVERY_SECONDS = 60.0

# A decision may take requests ahead of time (``lease_size``) for this process to
# spend without asking Redis again. Leased requests are counted in Redis when
# taken, so a limit is never exceeded; what a worker holds unspent (at most lease - 1
# per bucket, gone after LEASE_TTL_SECONDS) may refuse a principal that much early
# on another worker.
LEASE_TTL_SECONDS = 1.0

# GCRA on Redis's clock. KEYS[1]: the bucket; ARGV[1]: emission interval (ms per
# request); ARGV[2]: burst (requests); ARGV[3]: how many requests to take (0 only
# looks). Returns how many were taken (at least 1; 1 when only looking) when one
# is allowed, else minus the milliseconds until one would be.
_GCRA = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local allow_at = tat - (burst - 1) * interval
if now < allow_at then return -math.ceil(allow_at - now) end
if want == 0 then return 1 end
local taken = math.min(want, math.floor((now - allow_at) / interval) + 1)
local new_tat = tat + taken * interval
redis.call('SET', KEYS[1], new_tat, 'PX', math.ceil(new_tat - now) + 1)
return taken
"""


def connection_for(alias: str) -> ConnectionInterface:
    """A new redis-py connection to the server of the cache ``alias``.

    Made from the cache's settings, as Django's ``RedisCache`` makes its own
    clients: the first ``LOCATION`` (the one written to) and the ``OPTIONS`` (the
    timeouts). redis-py parses the URL (address, database, credentials, TLS).
    """
    config: dict[str, Any] = settings.CACHES[alias]
    location = config["LOCATION"]
    if isinstance(location, str):
        location = location.split(",")
    options = {
        name: value
        for name, value in config.get("OPTIONS", {}).items()
        if name not in DJANGO_CLIENT_OPTIONS
    }
    pool = ConnectionPool.from_url(location[0], **options)
    return pool.make_connection()


def lease_size(rate: Rate) -> int:
    """How many requests one decision takes from Redis for ``rate`` (``Rate.lease``
    under ``POWERCONTEXT_RATE_LIMIT_LEASE_MAX``)."""
    return rate.lease(settings.POWERCONTEXT_RATE_LIMIT_LEASE_MAX)


class RedisLimiter:
    """GCRA in Redis; skipped (fail open) while Redis is unreachable.

    Each thread keeps one connection of its own, made with the cache's settings
    (address, database, credentials, 0.2 s timeouts; ``connection_for``), and
    sends the script by its digest over it directly: redis-py's client takes the
    same connection from a locked pool, wraps the call in retries and health
    checks, and cost 84 us of CPU per decision against 49 us this way
    (docs/performance.md).
    A failed connection is dropped; the next decision after the back-off makes a
    new one.
    """

    def __init__(self, alias: str = CACHE_ALIAS) -> None:
        self.alias = alias  # the cache whose server holds the buckets
        self.down_until = 0.0
        self.last_logged = -LOG_EVERY_SECONDS
        self.failures = 0  # exported as a metric
        # Redis names a script by its SHA-1 (EVALSHA); nothing here is secret.
        self.digest = hashlib.sha1(_GCRA.encode(), usedforsecurity=False).hexdigest()
        self.connections = threading.local()
        self.leases = Leases()

    def limit(self, cache: RedisCache, bucket: str, rate: Rate, count: bool) -> float:
        now = time.monotonic()
        if count and self.leases.take(bucket, now):
            return 0
        if now < self.down_until:
            return 0
        key = cache.make_key(f"rl:{bucket}")  # memcached's key rules do not apply
        want = lease_size(rate) if count else 0
        args = (1, key, rate.interval_ms, rate.count, want)
        try:
            connection = self._connection(cache)
            try:
                reply = int(self._call(connection, "EVALSHA", self.digest, *args))
            except NoScriptError:  # a new or restarted Redis: send the script once
                reply = int(self._call(connection, "EVAL", _GCRA, *args))
        except Exception as exc:  # any Redis failure: serve without the limit
            self._drop_connection()
            self._failed(exc, now)
            return 0
        if reply <= 0:
            return float(-reply)
        if count and reply > 1:
            self.leases.add(bucket, reply - 1, now)
        return 0

    @staticmethod
    def _call(connection: Any, *command: Any) -> Any:
        connection.send_packed_command(
            connection.pack_command(*command), check_health=False
        )
        return connection.read_response()

    def _connection(self, cache: RedisCache) -> Any:
        """This thread's connection to ``cache``'s server, made on first use."""
        if getattr(self.connections, "cache", None) is not cache:
            self._drop_connection()
            self.connections.connection = connection_for(self.alias)
            self.connections.cache = cache
        return self.connections.connection

    def _drop_connection(self) -> None:
        connection = getattr(self.connections, "connection", None)
        self.connections.__dict__.clear()
        if connection is not None:
            with contextlib.suppress(Exception):
                connection.disconnect()

    def _failed(self, exc: Exception, now: float) -> None:
        self.failures += 1
        metrics.rate_limit_backend_failed()
        self.down_until = now + REDIS_BACKOFF_SECONDS
        if now - self.last_logged >= LOG_EVERY_SECONDS:
            self.last_logged = now
            logger.warning(
                "rate limits skipped: the cache at POWERCONTEXT_CACHE_URL is "
                "unreachable (%s); retrying in %.0f s",
                type(exc).__name__,
                REDIS_BACKOFF_SECONDS,
            )


class Leases:
    """Requests this process took from Redis buckets ahead of time (``lease_size``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.held: dict[str, tuple[int, float]] = {}  # bucket: (requests, expiry)

    def take(self, bucket: str, now: float) -> bool:
        """Spend one leased request of ``bucket``, if this process holds one."""
        with self.lock:
            requests, expires = self.held.get(bucket, (0, 0.0))
            if requests == 0:
                return False
            if now >= expires or requests == 1:
                del self.held[bucket]
                return now < expires
            self.held[bucket] = (requests - 1, expires)
            return True

    def add(self, bucket: str, requests: int, now: float) -> None:
        with self.lock:
            if len(self.held) > 10_000:
                self.held = {k: v for k, v in self.held.items() if v[1] > now}
            held, expires = self.held.get(bucket, (0, 0.0))
            if now >= expires:
                held = 0
            self.held[bucket] = (held + requests, now + LEASE_TTL_SECONDS)
