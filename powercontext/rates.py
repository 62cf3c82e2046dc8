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


@dataclass(frozen=True)
class Rate:
    """``count`` requests per ``period`` seconds."""

    count: int
    period: int

    @property
    def interval_ms(self) -> float:
        return self.period * 1000 / self.count


@functools.lru_cache(maxsize=16)
def parse_rate(text: str) -> Rate | None:
    """``N/s`` or ``N/min`` (None for ``off``); ValueError for anything else."""
    if text.strip().lower() == "off":
        return None
    match = _RATE.fullmatch(text.strip().lower())
    if match is None:
        raise ValueError(f"{text!r} is not a rate: use N/s, N/min or off")
    return Rate(int(match.group(1)), _PERIODS[match.group(2)])
