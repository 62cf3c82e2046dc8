"""The shape of the server - workers and threads - and the memory it may use.

The launcher (``powercontext.serve``) sizes the server from here and the settings
derive the default body limit from the same numbers, so the two never disagree
(docs/operations.md, "Memory"). Pure Python: the launcher imports it before
Django is set up.

The arithmetic: a worker process costs about ``WORKER_BASELINE_BYTES`` at rest,
and a request may raise it by at most 32 times its body plus 32 MiB. With every
thread of every worker handling a worst-case body at once, the server must stay
within ``POWERCONTEXT_MEMORY_BUDGET_BYTES`` (default 2 GiB):

    workers * baseline + workers * threads * (32 * body + 32 MiB) <= budget

so the default body limit is the largest multiple of 64 KiB that satisfies it,
between 1 MiB and 16 MiB. On 2 CPUs (3 workers x 2 threads) that is 7.625 MiB.
"""

from __future__ import annotations

import multiprocessing
import os

MIB = 1024 * 1024
WORKER_BASELINE_BYTES = 128 * MIB
REQUEST_OVERHEAD_BYTES = 32 * MIB
BODY_FACTOR = 32
BODY_FLOOR = 1 * MIB
BODY_CEILING = 16 * MIB
# Two threads a worker: under granian, 3 workers of 2 threads served 1.04-1.05x the
# new notes per second of 3 workers of 3 at c=16, and answered a lone client in
# 0.91-0.96x the time (docs/decisions/0044-granian.md, "The shape").
DEFAULT_THREADS = 2


# The variables the shape is read from, each with its least value; the settings
# and the launcher check them first (``SettingsEnv.shape_check``), so that a
# value that is no integer, or is below its least, is refused with the place it
# was set.
VARIABLES = {
    "POWERCONTEXT_WORKERS": 1,
    "POWERCONTEXT_THREADS": 1,
    "POWERCONTEXT_MEMORY_BUDGET_BYTES": 1,
}


def workers() -> int:
    """``POWERCONTEXT_WORKERS``, default one more than the CPUs (a worker's threads
    share one GIL; a third process keeps both cores busy while others wait)."""
    return _integer("POWERCONTEXT_WORKERS", multiprocessing.cpu_count() + 1)


def threads() -> int:
    return _integer("POWERCONTEXT_THREADS", DEFAULT_THREADS)


def memory_budget() -> int:
    return _integer("POWERCONTEXT_MEMORY_BUDGET_BYTES", 2048 * MIB)


def _integer(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name}={value!r} is not an integer") from None


def default_body_limit(
    *, workers: int, threads: int, budget: int, baseline: int = WORKER_BASELINE_BYTES
) -> int:
    """The largest body every thread can hold at once within ``budget``."""
    per_request = (budget - workers * baseline) / (workers * threads)
    body = (per_request - REQUEST_OVERHEAD_BYTES) / BODY_FACTOR
    step = 64 * 1024
    return int(min(max(body // step * step, BODY_FLOOR), BODY_CEILING))
