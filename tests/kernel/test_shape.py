"""The default body limit keeps every thread's worst case within the memory budget
(spec/limits.md 1, powercontext/shape.py)."""

from __future__ import annotations

import pytest
from django.conf import settings

from powercontext import shape

MIB = 1024 * 1024
BUDGET = 2048 * MIB


def worst_case(workers: int, threads: int, body: int) -> int:
    return workers * shape.WORKER_BASELINE_BYTES + workers * threads * (
        shape.BODY_FACTOR * body + shape.REQUEST_OVERHEAD_BYTES
    )


@pytest.mark.parametrize(("workers", "threads"), [(3, 3), (2, 4), (4, 3), (5, 3)])
def test_the_default_fits_the_budget(workers: int, threads: int) -> None:
    body = shape.default_body_limit(workers=workers, threads=threads, budget=BUDGET)

    assert worst_case(workers, threads, body) <= BUDGET
    assert worst_case(workers, threads, body + 64 * 1024) > BUDGET


def test_two_cpus_get_seven_and_five_eighths_mib() -> None:
    """The default shape on 2 CPUs: 3 workers of 2 threads (3 threads gave 4.75)."""
    assert shape.DEFAULT_THREADS == 2
    body = shape.default_body_limit(workers=3, threads=2, budget=BUDGET)

    assert body == 7.625 * MIB
    assert shape.default_body_limit(workers=3, threads=3, budget=BUDGET) == 4.75 * MIB


def test_the_default_holds_a_source_at_its_cap() -> None:
    body = shape.default_body_limit(
        workers=3, threads=shape.DEFAULT_THREADS, budget=BUDGET
    )

    assert body > settings.POWERCONTEXT_MAX_SOURCE_BYTES


@pytest.mark.parametrize(
    ("workers", "threads", "expected"), [(1, 1, 16 * MIB), (17, 3, 1 * MIB)]
)
def test_the_default_stays_between_its_bounds(
    workers: int, threads: int, expected: int
) -> None:
    assert (
        shape.default_body_limit(workers=workers, threads=threads, budget=BUDGET)
        == expected
    )
