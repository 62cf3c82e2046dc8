"""What the Redis behind the rate limits did during a run (BENCH_REDIS_URL).

Our rate limiter runs one Lua script per decision (EVALSHA, EVAL the first time;
powercontext/api/ratelimit.py) and fails open when Redis is unreachable. Counting
the scripts Redis ran during a measured run tells whether the limits were really
checked there: about one per request with limits on, none with limits off. The
counts are the whole Redis server's, so another client of the same server adds to
them. The server's PID lets bench/procstats.py count Redis's CPU as its own group.
"""

from __future__ import annotations

import sys

import redis

SCRIPT_COMMANDS = ("cmdstat_evalsha", "cmdstat_eval")


def connect(url: str) -> redis.Redis:
    """A client for ``url``; exits with a clear message if nothing answers."""
    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5)
    try:
        client.ping()
    except redis.RedisError as error:
        sys.exit(f"no Redis answers at {url} ({error}); set BENCH_REDIS_URL")
    return client


def process_id(client: redis.Redis) -> int:
    return int(client.info("server")["process_id"])


def scripts_run(client: redis.Redis) -> int:
    """Lua scripts the Redis server has run since its statistics were reset."""
    stats = client.info("commandstats")
    return sum(int(stats.get(name, {}).get("calls", 0)) for name in SCRIPT_COMMANDS)


def main() -> None:
    """``redisstats.py URL``: exit 0 if Redis answers there, else say so and exit 1."""
    connect(sys.argv[1])


if __name__ == "__main__":
    main()
