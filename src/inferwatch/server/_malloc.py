"""The C allocator tuned for a server whose queries make large, short-lived numpy arrays.

glibc's ``malloc`` serves a block over its mmap threshold (128 KiB at first) with its
own mapping, returned to the system on ``free``; but after such a block is freed it
raises the threshold (up to 32 MiB), so the next query's arrays of a few MiB come
from the heap arenas, one per thread that allocates, and stay there, fragmented,
after they are freed. Under five dashboard clients the server's resident memory
grew ~170 bytes per sample appended while the head held ~22 (1,084 MiB after four
minutes); with the threshold fixed and two arenas it went up and came back down
(586 MiB). Fixing the threshold (a fixed value turns the raising off) and the
trim threshold, and capping the arenas at two a core, is what
``MALLOC_MMAP_THRESHOLD_``, ``MALLOC_TRIM_THRESHOLD_`` and ``MALLOC_ARENA_MAX`` do
when set before a process starts; :func:`tune_malloc` does it from inside.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

__all__ = ["tune_malloc"]

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8
THRESHOLD = 128 * 1024


def tune_malloc() -> bool:
    """Set glibc's mmap and trim thresholds and its arena cap; False where there is no glibc."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # musl (Alpine) has no mallopt
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    arenas = 2 * (os.cpu_count() or 1)
    return all(mallopt(p, v) == 1 for p, v in ((_M_MMAP_THRESHOLD, THRESHOLD), (_M_TRIM_THRESHOLD, THRESHOLD),
                                                (_M_ARENA_MAX, arenas)))
