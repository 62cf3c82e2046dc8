"""Rate limits (spec/limits.md 3): per principal for writes and reads, per client
address for failed authentication and failed admin logins.

Each limit is ``N/s``, ``N/min`` or ``off`` (``POWERCONTEXT_RATE_LIMIT_WRITE``,
``_READ``, ``_AUTH_FAILURES``). The algorithm is GCRA - a token bucket kept as one
timestamp: a caller may send a burst of N, then one more every period/N, and a
refused request learns exactly when the next one will pass (``Retry-After``, whole
seconds, rounded up).

Counters are shared by every worker and server through Django's ``RedisCache``
(``POWERCONTEXT_CACHE_URL``): one script per decision, run atomically by Redis on
Redis's own clock, so workers never race and never disagree about time. Under a
high limit a decision takes a few requests at once (``lease_size``: 4 at 200/s,
1 - exact - at 20/s or 30/min) for its worker to spend without asking again. Without a
cache URL (the embedded default) each worker keeps its own counters in memory, so
the limits hold per worker. If Redis cannot be reached the service keeps serving:
the limit is skipped (fail open), the failure is logged at most once a minute and
counted, and Redis is left alone for a few seconds before it is tried again.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest
from redis.exceptions import NoScriptError

from powercontext import metrics
from powercontext.rates import Rate, parse_rate

logger = logging.getLogger("powercontext.ratelimit")

CACHE_ALIAS = "ratelimit"
# Retry Redis this long after it failed, instead of paying its timeout per request.
REDIS_BACKOFF_SECONDS = 5.0
LOG_EVERY_SECONDS = 60.0

# A request may take requests ahead of time, for this process to spend without
# asking Redis again: a lease of up to this much of the rate (200/s: 4, 400/s: 8,
# 20/s and any N/min below 3000/min: 1, that is exact), never more than
# POWERCONTEXT_RATE_LIMIT_LEASE_MAX (32; 1 makes every request ask Redis).
# Leased requests are counted in Redis when taken, so a limit is never exceeded;
# what a worker holds unspent (at most lease - 1 per bucket, gone after LEASE_TTL)
# may refuse a principal that much early on another worker.
LEASE_SECONDS = 0.02
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


def lease_size(rate: Rate) -> int:
    """How many requests one decision takes from Redis for ``rate``."""
    per_second = rate.count / rate.period
    most = settings.POWERCONTEXT_RATE_LIMIT_LEASE_MAX
    return max(1, min(most, int(per_second * LEASE_SECONDS)))


@dataclass(frozen=True)
class Decision:
    allowed: bool
    retry_after: int = 0  # whole seconds, at least 1 when refused


ALLOWED = Decision(True)


def limit(bucket: str, rate: Rate | None, *, count: bool = True) -> Decision:
    """Whether one more request in ``bucket`` is within ``rate``; counts it when
    allowed (``count=False`` only looks: a login is checked before it is tried,
    and counted only when it fails)."""
    if rate is None:
        return ALLOWED
    cache = caches[CACHE_ALIAS]
    if isinstance(cache, RedisCache):
        waited_ms = _redis.limit(cache, bucket, rate, count)
    else:
        waited_ms = _local.limit(bucket, rate, count)
    if waited_ms <= 0:
        return ALLOWED
    metrics.rate_limited(bucket.partition(":")[0])
    return Decision(False, max(1, math.ceil(waited_ms / 1000)))


def write_rate() -> Rate | None:
    return parse_rate(settings.POWERCONTEXT_RATE_LIMIT_WRITE)


def read_rate() -> Rate | None:
    return parse_rate(settings.POWERCONTEXT_RATE_LIMIT_READ)


def auth_failure_rate() -> Rate | None:
    return parse_rate(settings.POWERCONTEXT_RATE_LIMIT_AUTH_FAILURES)


def client_address(request: HttpRequest) -> str:
    """The caller's address: ``POWERCONTEXT_CLIENT_ADDRESS_HEADER`` (a header the
    proxy in front sets, e.g. ``X-Real-IP``) when configured, else the peer."""
    header = settings.POWERCONTEXT_CLIENT_ADDRESS_HEADER
    if header:
        value = request.headers.get(header, "").strip()
        if value:
            return value[:64]
    return str(request.META.get("REMOTE_ADDR", "-"))


class _RedisLimiter:
    """GCRA in Redis; skipped (fail open) while Redis is unreachable.

    Each thread keeps one connection of its own, made with the cache's settings
    (address, database, credentials, 0.2 s timeouts), and sends the script by its
    digest over it directly: redis-py's client takes the same connection from a
    locked pool, wraps the call in retries and health checks, and cost 84 us of CPU
    per decision against 49 us this way (docs/performance.md).
    A failed connection is dropped; the next decision after the back-off makes a
    new one.
    """

    def __init__(self) -> None:
        self.down_until = 0.0
        self.last_logged = -LOG_EVERY_SECONDS
        self.failures = 0  # exported as a metric
        # Redis names a script by its SHA-1 (EVALSHA); nothing here is secret.
        self.digest = hashlib.sha1(_GCRA.encode(), usedforsecurity=False).hexdigest()
        self.connections = threading.local()
        self.leases = _Leases()

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
            client = cache._cache.get_client(write=True)  # type: ignore[attr-defined]
            pool = client.connection_pool
            self.connections.connection = pool.connection_class(
                **pool.connection_kwargs
            )
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


class _Leases:
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


class _LocalLimiter:
    """GCRA in this process's memory (no cache URL: limits hold per worker)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.buckets: dict[str, float] = {}

    def limit(self, bucket: str, rate: Rate, count: bool) -> float:
        now = time.monotonic() * 1000
        with self.lock:
            if len(self.buckets) > 100_000:
                self.buckets = {k: v for k, v in self.buckets.items() if v > now}
            tat = max(self.buckets.get(bucket, now), now)
            allow_at = tat - (rate.count - 1) * rate.interval_ms
            if now < allow_at:
                return allow_at - now
            if count:
                self.buckets[bucket] = tat + rate.interval_ms
            return 0


_redis = _RedisLimiter()
_local = _LocalLimiter()


def redis_failures() -> int:
    """How many times this process skipped a limit because Redis failed."""
    return _redis.failures


def principal_limit(name: str, *, write: bool) -> Decision:
    """One more write (or read) of principal ``name``: counted, and allowed or not."""
    rate = write_rate() if write else read_rate()
    return limit(f"{'write' if write else 'read'}:{name}", rate)


class PrincipalRateThrottle:
    """DRF throttle: writes (POST/PUT/PATCH/DELETE) and reads counted separately
    per principal, after authentication and before the body is read."""

    retry_after = 0

    def allow_request(self, request: Any, view: Any) -> bool:
        principal = getattr(request, "user", None)
        name = getattr(principal, "name", None)
        if name is None:
            return True
        write = request.method not in ("GET", "HEAD", "OPTIONS")
        decision = principal_limit(name, write=write)
        self.retry_after = decision.retry_after
        return decision.allowed

    def wait(self) -> int:
        return self.retry_after
