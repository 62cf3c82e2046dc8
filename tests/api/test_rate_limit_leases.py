"""Rate limits through Redis under high limits: a decision takes a few requests
at once for its worker (``Rate.lease``, powercontext/api/ratelimit_redis.py), and the
limit still holds across workers (spec/limits.md 3).

Each ``RedisLimiter`` stands for one worker process; they share one Redis bucket
(the machine's Redis, ``POWERCONTEXT_TEST_REDIS_URL``, database 13).
"""

from __future__ import annotations

import math
import os
import secrets
from typing import Any

import pytest
import redis
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache

from powercontext.api.ratelimit_redis import CACHE_ALIAS, RedisLimiter, lease_size
from powercontext.rates import LEASE_MAX_DEFAULT as LEASE_MAX
from powercontext.rates import Rate, parse_rate

REDIS_URL = os.environ.get("POWERCONTEXT_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")


@pytest.fixture
def cache(settings: Any) -> RedisCache:
    """The rate-limit cache, on the test Redis: the limiter connects to the server
    the ``ratelimit`` alias names."""
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping()
    except redis.ConnectionError:
        pytest.fail(f"Redis is needed at {REDIS_URL}: .ci/run starts redis-server")
    settings.CACHES = {
        **settings.CACHES,
        CACHE_ALIAS: {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"socket_timeout": 1},
        },
    }
    redis_cache = caches[CACHE_ALIAS]
    assert isinstance(redis_cache, RedisCache)
    return redis_cache


@pytest.mark.parametrize(
    ("text", "lease"),
    [
        ("20/s", 1),
        ("30/min", 1),
        ("2999/min", 1),
        ("200/s", 4),
        ("400/s", 8),
        ("1000000/s", LEASE_MAX),
    ],
)
def test_leases_are_a_fiftieth_of_a_second_of_the_rate(text: str, lease: int) -> None:
    rate = parse_rate(text)
    assert rate is not None
    assert lease_size(rate) == lease


def test_a_lease_of_one_makes_every_request_ask(settings: Any, cache: Any) -> None:
    settings.POWERCONTEXT_RATE_LIMIT_LEASE_MAX = 1
    rate = Rate(1_000_000, 1)
    assert lease_size(rate) == 1
    worker = RedisLimiter()
    bucket = f"test:{secrets.token_hex(6)}"
    key = cache.make_key(f"rl:{bucket}")
    client = redis.Redis.from_url(REDIS_URL)
    seen = set()
    for _ in range(5):
        assert worker.limit(cache, bucket, rate, True) == 0
        seen.add(client.get(key))
    assert len(seen) == 5  # each request moved the bucket


# The script reads Redis's clock in whole milliseconds: each end of a measured
# window may be cut short by up to one.
TRUNCATED_SECONDS = 0.002


def redis_seconds(client: redis.Redis) -> float:
    """Redis's clock, the one the limiter's script decides by."""
    seconds, microseconds = client.time()
    return seconds + microseconds / 1_000_000


def test_workers_sharing_a_bucket_never_exceed_it(cache: Any) -> None:
    """Three workers take turns at a bucket of 1000/min (lease 1: exact) and of
    100,000/min with a burst (lease 33 -> 32): together they get the burst at most,
    and a worker is refused at most what the others hold unspent early.

    The refill allowed during the loop is measured on Redis's clock, which the
    script reads (``TIME``), not on this process's monotonic clock, which a
    paused or slewed VM can set apart from Redis's wall clock. Each end of the
    window can be truncated by up to a millisecond in the script, hence the
    slack. A Redis call that fails lets requests through (fail open), so the
    failures are checked first: an over-grant is then the limiter's own."""
    client = redis.Redis.from_url(REDIS_URL)
    for rate in (Rate(1000, 60), Rate(100_000, 60)):
        bucket = f"test:{secrets.token_hex(6)}"
        workers = [RedisLimiter() for _ in range(3)]
        lease = lease_size(rate)
        allowed = refused = 0
        started = redis_seconds(client)
        for number in range(rate.count * 6 // 5):
            waited = workers[number % 3].limit(cache, bucket, rate, True)
            if waited == 0:
                allowed += 1
            else:
                refused += 1
                assert waited > 0
        elapsed = redis_seconds(client) - started
        assert [w.failures for w in workers] == [0, 0, 0]
        slack = math.ceil(TRUNCATED_SECONDS * rate.count / rate.period) + 1
        refill = elapsed * rate.count / rate.period
        assert allowed <= rate.count + refill + slack, (rate, allowed, refill)
        assert allowed >= rate.count - 3 * (lease - 1), (rate, allowed)
        assert refused > 0


class CountingLimiter(RedisLimiter):
    """A worker's limiter that counts the commands it sends to Redis."""

    def __init__(self) -> None:
        super().__init__()
        self.commands = 0

    def _call(self, connection: Any, *command: Any) -> Any:  # type: ignore[override]
        self.commands += 1
        return RedisLimiter._call(connection, *command)


def test_a_worker_spends_its_lease_without_asking_redis(cache: Any) -> None:
    """Counted at the worker, not read back from the bucket: at 1,000,000/s a
    lease is 32 microseconds of the rate, and Redis lets the key go 1 ms later."""
    rate = Rate(1_000_000, 1)
    worker = CountingLimiter()
    bucket = f"test:{secrets.token_hex(6)}"
    assert worker.limit(cache, bucket, rate, True) == 0
    assert worker.commands == 1

    for _ in range(LEASE_MAX - 1):
        assert worker.limit(cache, bucket, rate, True) == 0
    assert worker.commands == 1  # spent here, Redis not asked again
    assert worker.limit(cache, bucket, rate, True) == 0
    assert worker.commands == 2  # the next lease


def test_looking_takes_nothing(cache: Any) -> None:
    rate = Rate(2, 60)
    worker = RedisLimiter()
    bucket = f"test:{secrets.token_hex(6)}"
    for _ in range(5):
        assert worker.limit(cache, bucket, rate, False) == 0
    assert worker.limit(cache, bucket, rate, True) == 0
    assert worker.limit(cache, bucket, rate, True) == 0
    assert worker.limit(cache, bucket, rate, False) > 0
    assert worker.limit(cache, bucket, rate, True) > 0
