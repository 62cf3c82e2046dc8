"""Rate limits (spec/limits.md 3): per principal for writes and reads, per client
address for failed authentication and failed admin logins.

Each limit is ``N/s``, ``N/min`` or ``off`` (``POWERCONTEXT_RATE_LIMIT_WRITE``,
``_READ``, ``_AUTH_FAILURES``). The algorithm is GCRA - a token bucket kept as one
timestamp: a caller may send a burst of N, then one more every period/N, and a
refused request learns exactly when the next one will pass (``Retry-After``, whole
seconds, rounded up).

Counters are shared by every worker and server through Django's ``RedisCache``
(``POWERCONTEXT_CACHE_URL``): one script per decision, run atomically by Redis on
Redis's own clock, so workers never race and never disagree about time
(``ratelimit_redis``). Under a high limit a decision takes a few requests at once (4
at 200/s, 1 - exact - at 20/s or 30/min) for its worker to spend without asking
again. Without a cache URL (the embedded default) each worker keeps its own counters
in memory, so the limits hold per worker. If Redis cannot be reached the service
keeps serving: the limit is skipped (fail open), the failure is logged at most once
a minute and counted, and Redis is left alone for a few seconds before it is tried
again.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.http import HttpRequest

from powercontext import metrics
from powercontext.rates import Rate, parse_rate

from .ratelimit_redis import CACHE_ALIAS, RedisLimiter


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


_redis = RedisLimiter()
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
