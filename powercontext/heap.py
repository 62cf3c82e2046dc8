"""What a worker keeps after its requests: their cyclic garbage is collected by the
bytes of the bodies they read, and the C heap's free memory goes back to the system
(docs/operations.md, "Memory"). The C heap's calls are no-ops off glibc."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import threading
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


class RequestGarbage:
    """Collects the cyclic garbage of requests once the bodies they read add up to
    ``bytes_between``, then hands the freed heap memory back.

    Every request leaves a cycle (Django's and DRF's request, the view, their
    contexts and the response refer to each other) that holds what the request
    held: its input stream, whose buffer is the whole body. Only the cyclic
    collector frees it, and the worker runs that by allocations
    (``powercontext/wsgi.py``), which a body of a few large values barely makes: a
    worker sent the same 7.6 MiB body again and again kept every one of them.
    Counting bytes bounds what waits to about ``bytes_between`` plus the bodies
    of the requests still closing.

    ``body_closed`` runs as a response closes, while the server still holds that
    response: a collection frees what the requests before it left, and the
    closing request's own garbage waits for the next one.
    """

    def __init__(self, bytes_between: int) -> None:
        self.bytes_between = bytes_between
        self._lock = threading.Lock()
        self._bytes_since = 0

    def body_closed(self, size: int) -> None:
        with self._lock:
            self._bytes_since += size
            if self._bytes_since < self.bytes_between:
                return
            self._bytes_since = 0
        gc.collect()
        release_free_memory()
