"""Closed chunks decoded once for small reads: a dashboard panel reads the same few chunks every refresh.

A panel over one service reads a handful of series; their closed chunks (32 samples each) differ
in size from series to series, so they are decoded a shape at a time, a few numpy passes each:
~140 us of a ~600 us panel for 3 series over 11 minutes, every request, for chunks that never
change. A closed chunk's decoding is a function of its bytes alone, so the decoded times and values
are kept by those bytes: nothing to invalidate when the head closes, drops or forgets chunks (a
chunk no longer read just ages out). Only reads of at most :data:`SMALL_READ` chunks use it: a wide
read decodes its chunks in bulk, and would only push the panels' chunks out.

>>> import numpy as np
>>> from inferwatch.store._chunk import encode
>>> c = encode(np.array([[1.0, 2.0]]), np.array([[5.0, 6.0]]))[0]
>>> memo = ChunkMemo(size=2)
>>> [t.tolist() for t in memo.decoded([c])[0]], memo.hits  # decoded
([[1.0, 2.0]], 0)
>>> [v.tolist() for v in memo.decoded([c])[1]], memo.hits  # kept
([[5.0, 6.0]], 1)
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from inferwatch.store._chunk import decode

__all__ = ["MEMO_CHUNKS", "SMALL_READ", "ChunkMemo"]

MEMO_CHUNKS = 4096
"""Chunks kept decoded (~0.6 KiB each with their bytes: ~2.5 MiB)."""
SMALL_READ = 64
"""The most chunks a read may touch to use the memo."""
Rows = tuple[np.ndarray, np.ndarray]


class ChunkMemo:
    """Decoded chunks by their bytes, the oldest kept dropped first once ``size`` are kept."""

    def __init__(self, size: int = MEMO_CHUNKS) -> None:
        self.size = size
        self.hits = 0
        self._kept: dict[bytes, Rows] = {}
        self._lock = threading.Lock()

    def decoded(self, chunks: Sequence[bytes]) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Each chunk's times and values (arrays the caller must not change), those not kept decoded a
        shape at a time."""
        with self._lock:
            got = [self._kept.get(c) for c in chunks]
        shapes: dict[bytes, list[int]] = {}
        for i, rows in enumerate(got):
            if rows is None:
                shapes.setdefault(chunks[i][:5], []).append(i)
        self.hits += len(chunks) - sum(map(len, shapes.values()))
        new: dict[bytes, Rows] = {}
        for picked in shapes.values():
            t, v = decode([chunks[i] for i in picked])
            for k, i in enumerate(picked):
                got[i] = new[chunks[i]] = (t[k], v[k])
        if new:
            self._keep(new)
        return [r[0] for r in got], [r[1] for r in got]  # type: ignore[index]

    def _keep(self, new: dict[bytes, Rows]) -> None:
        with self._lock:
            self._kept.update(new)
            while len(self._kept) > self.size:
                del self._kept[next(iter(self._kept))]
