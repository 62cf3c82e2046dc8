"""The C heap of a worker process: what a large request leaves behind goes back to
the system (docs/operations.md, "Memory"). No-ops off glibc."""

from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any

# mallopt's parameter number for the size from which a block is its own mapping.
_M_MMAP_THRESHOLD = -3
# Blocks this large (a body, its decoded lists, an answer) are mapped on their own
# and unmapped when freed. glibc's default threshold moves up to 32 MiB after the
# first large block is freed, after which such blocks stay in the heap as free
# memory the process keeps; a fixed threshold stops it moving.
LARGE_BLOCK_BYTES = 1024 * 1024


def _libc() -> Any:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim  # noqa: B018 - only glibc has it
        libc.mallopt  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()


def large_blocks_go_straight_back() -> None:
    """Map every block of ``LARGE_BLOCK_BYTES`` or more on its own, always."""
    if _LIBC is not None:
        _LIBC.mallopt(_M_MMAP_THRESHOLD, LARGE_BLOCK_BYTES)


def release_free_memory() -> None:
    """Hand the heaps' free memory back to the system (glibc's ``malloc_trim``).

    After a large body the worker's heaps hold tens of MiB of small blocks that are
    free but kept by the allocator (per-thread arenas are not trimmed on their
    own); returning them keeps the worker's resident size near its rest size,
    which the memory budget counts on.
    """
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
