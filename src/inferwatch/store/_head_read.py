"""A block of series read from the head at once: their open parts as views, their closed chunks
decoded together (one numpy pass per chunk shape, not per chunk or per sample).

>>> from array import array
>>> class Buf:  # the parts of a SampleBuffer that a read looks at
...     t, v, data, bounds, ends = array("d", [10.0, 20.0]), array("d", [1.0, 2.0]), None, None, None
>>> got, t, v, sizes = read_block([Buf(), None], 15.0, 30.0, False)
>>> got, t.tolist(), v.tolist(), sizes
([0], [20.0], [2.0], [1])
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from itertools import repeat
from operator import attrgetter, eq, getitem, is_
from typing import Protocol, cast

import numpy as np

from inferwatch.store._chunk import (
    HEADER,
    decode,
    decode_rows,
    decode_times,
    samples_in,
    size,
    split,
    time_bytes,
)
from inferwatch.store._shared import SharedBlock

__all__ = ["MEMO_CHUNKS", "SMALL_READ", "ChunkMemo", "read_block", "read_shared"]

_T, _V, _BOUNDS, _ENDS, _DATA = (attrgetter(k) for k in ("t", "v", "bounds", "ends", "data"))
_BYTES = cast(Callable[[object], bytes], array.tobytes)
_EMPTY = np.empty(0, dtype=np.float64)
_NONE = np.zeros(1, dtype=np.int64)
_VIEW = cast(Callable[[object], memoryview], memoryview)
_CUT = cast(Callable[[memoryview, slice], memoryview], getitem)


MEMO_CHUNKS = 4096
"""Chunks kept decoded (~0.6 KiB each with their bytes: ~2.5 MiB)."""
SMALL_READ = 64
"""The most chunks a read may touch to use the memo."""
Rows = tuple[np.ndarray, np.ndarray]


class ChunkMemo:
    """Decoded chunks by their bytes, the oldest kept dropped first once ``size`` are kept: closed chunks
    decoded once for small reads, as a dashboard panel reads the same few chunks every refresh.

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


_MEMO = ChunkMemo()  # small reads' closed chunks, decoded once (one per process: a chunk is its bytes)


class _Buffer(Protocol):
    t: array[float]
    v: array[float]
    data: bytes | None
    bounds: array[float] | None
    ends: array[int] | None


def read_block(bufs: Sequence[_Buffer | None], start: float, end: float, latest: bool,
               ) -> tuple[list[int], np.ndarray, np.ndarray, list[int]]:
    """The samples in ``[start, end]`` of ``bufs`` (``latest``: each one's last there): the positions
    of the buffers that have some, all their times and all their values end to end, and how many
    each has. The caller holds the store's lock: a view pins its buffer, so none outlives the call.

    No array per series: their small blocks, freed between the head's growing buffers, left the
    heap fragmented for good under concurrent readers (RSS grew 3x the head's own bytes).
    """
    aligned = _aligned(bufs, start, end, latest)
    if aligned is not None:
        return aligned
    got: list[int] = []
    ts: list[memoryview] = []
    vs: list[memoryview] = []
    blobs: list[bytes] = []  # for each series in ``got``, its touched chunks (a piece of its data) or b""
    add_t, add_v, add_blob = ts.append, vs.append, blobs.append
    try:
        for pos, buf in enumerate(bufs):
            if buf is None:
                continue
            t = buf.t
            n = len(t)
            lo = 0 if not n or t[0] >= start else bisect_left(t, start)
            hi = n if not n or t[n - 1] <= end else bisect_right(t, end)
            blob = b""
            b = buf.bounds
            if latest and lo < hi:
                lo = hi - 1
            elif b and b[-1] >= start and b[0] <= end:  # closed chunks may reach into the window
                i = 0 if b[0] >= start else bisect_left(b, start) >> 1
                j = len(b) >> 1 if b[-1] <= end else (bisect_right(b, end) + 1) >> 1
                if i < j:
                    ends = buf.ends
                    i = j - 1 if latest else i
                    blob = buf.data[ends[i - 1] if i else 0:ends[j - 1]]  # type: ignore[index]
            if blob or lo < hi:
                got.append(pos)
                add_blob(blob)
                add_t(memoryview(t)[lo:hi])
                add_v(memoryview(buf.v)[lo:hi])
        t_open = np.frombuffer(bytearray().join(ts), dtype=np.float64)
        v_open = np.frombuffer(bytearray().join(vs), dtype=np.float64)
        sizes = [len(x) for x in ts]
    finally:
        ts.clear()
        vs.clear()
    return _with_chunks(got, blobs, (t_open, v_open, sizes), start, end, latest)


_Read = tuple[list[int], np.ndarray, np.ndarray, list[int]]


def _with_chunks(got: list[int], blobs: list[bytes], open_part: tuple[np.ndarray, np.ndarray, list[int]],
                 start: float, end: float, latest: bool) -> _Read:
    """The open parts, with each series' touched chunks (``blobs``) decoded in front of its part."""
    joined = b"".join(blobs)
    if not joined:
        return got, *open_part
    t_c, v_c, closed = _decoded(joined, blobs)
    return _merged(got, (t_c, v_c, closed), open_part, start, end, latest)


def _aligned(bufs: Sequence[_Buffer | None], start: float, end: float, latest: bool,
             ) -> tuple[list[int], np.ndarray, np.ndarray, list[int]] | None:
    """``read_block`` of series scraped together (the same open times, the same chunk bounds: a
    target's series, created at one scrape): the window found once, every series' part of it taken
    by C-level ``map`` calls, no Python step per series. None when the block is not so."""
    first = bufs[0] if len(bufs) > 1 else None
    if first is None or None in bufs:
        return None
    t0, b0 = first.t, first.bounds
    if not _together(cast(Sequence[_Buffer], bufs)):
        return None
    n, m = len(t0), len(bufs)
    lo = 0 if not n or t0[0] >= start else bisect_left(t0, start)
    hi = n if not n or t0[n - 1] <= end else bisect_right(t0, end)
    i = j = 0
    if latest and lo < hi:
        lo = hi - 1
    elif b0 and b0[-1] >= start and b0[0] <= end:
        i, j = bisect_left(b0, start) >> 1, (bisect_right(b0, end) + 1) >> 1
        i = j - 1 if latest and i < j else i
    if lo >= hi and i >= j:
        return [], _EMPTY, _EMPTY, []
    window = repeat(slice(lo, hi))
    views: list[memoryview] = list(map(_CUT, map(_VIEW, map(_T, bufs)), window))
    views += map(_CUT, map(_VIEW, map(_V, bufs)), window)
    try:
        t_open = np.frombuffer(bytearray().join(views[:m]), dtype=np.float64)
        v_open = np.frombuffer(bytearray().join(views[m:]), dtype=np.float64)
    finally:
        views.clear()
    blobs: list[bytes] = []
    if i < j:
        ends = list(map(_ENDS, bufs))
        froms = map(getitem, ends, repeat(i - 1)) if i else repeat(0)
        blobs = list(map(getitem, map(_DATA, bufs), map(slice, froms, map(getitem, ends, repeat(j - 1)))))
    return _with_chunks(list(range(m)), blobs, (t_open, v_open, [hi - lo] * m), start, end, latest)


def _together(bufs: Sequence[_Buffer]) -> bool:
    """Whether every buffer has the first's open times and chunk bounds, bit for bit (compared as bytes:
    ~10x faster than comparing the arrays, which makes a float object per item)."""
    t0, b0 = bufs[0].t.tobytes(), bufs[0].bounds
    if not all(map(eq, map(_BYTES, map(_T, bufs)), repeat(t0))):
        return False
    if b0 is None:
        return all(map(is_, map(_BOUNDS, bufs), repeat(None)))
    bounds = list(map(_BOUNDS, bufs))
    return None not in bounds and all(map(eq, map(_BYTES, bounds), repeat(b0.tobytes())))


def read_shared(bufs: Sequence[_Buffer | None], start: float, end: float) -> SharedBlock | None:
    """The samples in ``[start, end]`` of series scraped together (every buffer's times the same, bit for
    bit, open and closed: a target's series) as a :class:`SharedBlock`: those times once, the values
    decoded when asked for. None when the block is not so (then :func:`read_block` reads it). The caller
    holds the lock; the block holds copies only.

    A range query's step picks then look at one row of times, not at every series' copy of it, and
    decode only the values they pick; the closed chunks' times are decoded once, from the first series.
    """
    first = bufs[0] if bufs else None
    if first is None or None in bufs or not _together(cast(Sequence[_Buffer], bufs)):
        return None
    t0, b0, m = first.t, first.bounds, len(bufs)
    n = len(t0)
    lo = 0 if not n or t0[0] >= start else bisect_left(t0, start)
    hi = max(lo, n if not n or t0[n - 1] <= end else bisect_right(t0, end))
    if hi - lo == n:  # the usual case (the open samples are the newest): no view a series
        v_open = np.frombuffer(bytearray().join(map(_V, bufs)), dtype=np.float64).reshape(m, n)
    else:
        views: list[memoryview] = list(map(_CUT, map(_VIEW, map(_V, bufs)), repeat(slice(lo, hi))))
        try:
            v_open = np.frombuffer(bytearray().join(views), dtype=np.float64).reshape(m, hi - lo)
        finally:
            views.clear()
    t_open = np.array(t0[lo:hi], dtype=np.float64)
    if not b0:
        return SharedBlock(t_open, None, 0, v_open)
    i, j = bisect_left(b0, start) >> 1, (bisect_right(b0, end) + 1) >> 1
    if i >= j:
        return SharedBlock(t_open, None, 0, v_open)
    # Every series' chunks whole, end to end (slicing each would cost more than the bytes). Each series
    # has k chunks (the same bounds); where the bytes are m x k x width and a chunk of the first one's
    # shape starts at every width-th byte, every chunk is of that shape: the bytes are a matrix.
    data = cast(bytes, first.data)
    k, width = len(b0) >> 1, size(data[:HEADER])
    joined = b"".join(map(_DATA, bufs))
    if len(joined) != m * k * width:
        return None
    every = np.frombuffer(joined, dtype=np.uint8).reshape(m, k, width)
    if not (every[:, :, :5] == every[0, 0, :5]).all():
        return None
    rows = every[:, i:j]
    if not _alike(rows, 5, HEADER - 8) or not _alike(rows, HEADER, time_bytes(rows[0])):
        return None
    t_c = decode_times(rows[0]).ravel()
    a = int(np.searchsorted(t_c, start, side="left"))
    b = max(a, int(np.searchsorted(t_c, end, side="right")))
    return SharedBlock(np.concatenate([t_c[a:b], t_open]), every, a, v_open, i)


def _alike(rows: np.ndarray, a: int, b: int) -> bool:
    """Whether bytes ``a:b`` of every series' chunks (``rows``: series x chunks x bytes) are the first's."""
    return bool((rows[:, :, a:b] == rows[0, :, a:b]).all())


def _decoded(joined: bytes, blobs: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The chunks in ``blobs`` (each series' chunks end to end; ``joined``: all of them), decoded end
    to end, and how many samples each series' chunks hold."""
    width = size(joined[:HEADER])
    lens = np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs))
    if not (lens % width).any():  # the usual case: every chunk alike (each row then starts one)
        rows = np.frombuffer(joined, dtype=np.uint8).reshape(-1, width)
        if (rows[:, :5] == rows[0, :5]).all():
            t, v = decode_rows(rows)
            return t.ravel(), v.ravel(), lens // width * t.shape[1]
    per_series = [split(blob) for blob in blobs]
    chunks = [c for cs in per_series for c in cs]
    if len(chunks) <= SMALL_READ:  # a panel's few series: decoded once, kept by their bytes
        ts, vs = _MEMO.decoded(chunks)
        per = np.cumsum(np.fromiter(map(len, per_series), dtype=np.int64, count=len(per_series)))
        upto = np.concatenate([_NONE, np.cumsum(np.fromiter(map(len, ts), dtype=np.int64, count=len(ts)))])
        return np.concatenate(ts), np.concatenate(vs), np.diff(upto[per], prepend=0)
    counts = np.fromiter(map(samples_in, chunks), dtype=np.int64, count=len(chunks))
    shapes: dict[bytes, list[int]] = {}
    for i, c in enumerate(chunks):
        shapes.setdefault(c[:5], []).append(i)
    at = np.cumsum(counts) - counts
    t_all, v_all = np.empty(int(counts.sum())), np.empty(int(counts.sum()))
    for picked in shapes.values():
        t, v = decode([chunks[i] for i in picked])
        where = (at[picked][:, None] + np.arange(t.shape[1])).ravel()
        t_all[where], v_all[where] = t.ravel(), v.ravel()
    owner = np.repeat(np.arange(len(blobs)), [len(cs) for cs in per_series])
    return t_all, v_all, np.bincount(owner, weights=counts, minlength=len(blobs)).astype(np.int64)


def _merged(got: list[int], closed_part: tuple[np.ndarray, np.ndarray, np.ndarray],
            open_part: tuple[np.ndarray, np.ndarray, list[int]], start: float, end: float, latest: bool,
            ) -> tuple[list[int], np.ndarray, np.ndarray, list[int]]:
    """``read_block``'s answer when closed chunks are touched: each series' chunk samples in the window,
    then its open part (already cut to it), gathered in one pass an array."""
    t_c, v_c, closed = closed_part
    t_open, v_open, sizes = open_part
    m = len(got)
    if m > 1 and sizes.count(sizes[0]) == m and (closed == closed[0]).all():
        rows = t_c.reshape(m, -1)
        if (rows == rows[0]).all():  # one time column for all (a target's series): the window found once
            a = int(np.searchsorted(rows[0], start))
            b = max(a, int(np.searchsorted(rows[0], end, side="right")))
            t_all = np.concatenate([rows[:, a:b], t_open.reshape(m, -1)], axis=1).ravel()
            v_all = np.concatenate([v_c.reshape(m, -1)[:, a:b], v_open.reshape(m, -1)], axis=1).ravel()
            return _last(got, t_all, v_all, np.full(m, b - a + sizes[0], dtype=np.int64), latest)
    at = np.cumsum(closed) - closed
    # Only a series' first chunk starts before the window and only its last ends after it: how many of
    # its chunk samples to skip at either end, by one binary search over all series.
    has = np.flatnonzero(closed)
    at_h, n_h = at[has], closed[has]
    skip = np.zeros_like(closed)
    kept = closed.copy()
    if t_c[at_h].min() < start:
        skip[has] = _below(t_c, at_h, n_h, start)
        kept -= skip
    if t_c[at_h + n_h - 1].max() > end:
        kept[has] = np.maximum(_below(t_c, at_h, n_h, float(np.nextafter(end, np.inf))) - skip[has], 0)
    opened = np.array(sizes, dtype=np.int64)
    n = kept + opened
    if len(has) == m and (closed == closed[0]).all() and (skip == skip[0]).all() and (kept == kept[0]).all() \
            and (opened == opened[0]).all():  # series scraped together: a matrix, no index arrays
        a, b = int(skip[0]), int(skip[0] + kept[0])
        t_all = np.concatenate([t_c.reshape(m, -1)[:, a:b], t_open.reshape(m, -1)], axis=1).ravel()
        v_all = np.concatenate([v_c.reshape(m, -1)[:, a:b], v_open.reshape(m, -1)], axis=1).ravel()
    else:  # each series: its kept chunk samples, then its open part, as runs of one source array
        src = np.stack([at + skip, np.cumsum(opened) - opened + t_c.shape[0]], axis=1).ravel()
        runs = np.stack([kept, opened], axis=1).ravel()
        idx = np.repeat(src - (np.cumsum(runs) - runs), runs) + np.arange(int(runs.sum()))
        t_all, v_all = np.concatenate([t_c, t_open])[idx], np.concatenate([v_c, v_open])[idx]
    return _last(got, t_all, v_all, n, latest)


def _last(got: list[int], t_all: np.ndarray, v_all: np.ndarray, n: np.ndarray, latest: bool) -> _Read:
    """The answer: the series with samples (``latest``: only each one's last)."""
    if latest:
        last_k = np.cumsum(n)[n > 0] - 1
        t_all, v_all, n = t_all[last_k], v_all[last_k], (n > 0).astype(np.int64)
    has_any = np.flatnonzero(n).tolist()
    return [got[k] for k in has_any], t_all, v_all, n[has_any].tolist()


def _below(t: np.ndarray, at: np.ndarray, count: np.ndarray, x: float) -> np.ndarray:
    """For each run ``t[at[i]:at[i] + count[i]]`` (ascending), how many of its times are below ``x``:
    a binary search of all runs at once."""
    lo, hi = np.zeros_like(at), count.copy()
    while (go := lo < hi).any():
        mid = (lo + hi) >> 1
        below = t[np.minimum(at + mid, t.shape[0] - 1)] < x
        lo = np.where(go & below, mid + 1, lo)
        hi = np.where(go & ~below, mid, hi)
    return lo
