"""Rates as operators write them: ``N/s``, ``N/min`` or ``off``.

Settings parse them when they load (a bad value stops the server with a clear
message); the rate limiter (``powercontext.api.ratelimit``) applies them.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

_RATE = re.compile(r"([1-9][0-9]{0,8})/(s|sec|second|m|min|minute)")
_PERIODS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60}
# A worker may take a fiftieth of a second of a rate at once from the shared bucket
# (powercontext.api.ratelimit_redis), never more than POWERCONTEXT_RATE_LIMIT_LEASE_MAX.
LEASE_SECONDS = 0.02
LEASE_MAX_DEFAULT = 32


@dataclass(frozen=True)
class Rate:
    """``count`` requests per ``period`` seconds."""

    count: int
    period: int

    @property
    def interval_ms(self) -> float:
        return self.period * 1000 / self.count

    def lease(self, most: int) -> int:
        """How many requests one decision takes from the shared bucket: 4 at 200/s,
        8 at 400/s, 1 (every request asks) under 50/s and below 3000/min."""
        return max(1, min(most, int(self.count / self.period * LEASE_SECONDS)))


@functools.lru_cache(maxsize=16)
def parse_rate(text: str) -> Rate | None:
    """``N/s`` or ``N/min`` (None for ``off``); ValueError for anything else."""
    if text.strip().lower() == "off":
        return None
    match = _RATE.fullmatch(text.strip().lower())
    if match is None:
        raise ValueError(f"{text!r} is not a rate: use N/s, N/min or off")
    return Rate(int(match.group(1)), _PERIODS[match.group(2)])
