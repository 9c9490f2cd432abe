"""In-memory sample buffers per series: the memory store, and the SQLite store's head.

Each series keeps ``array('d')`` buffers (an append is a C call); a read
copies the window it asks for into numpy arrays, so readers own what they get.
"""

from __future__ import annotations

import math
import struct
from array import array
from bisect import bisect_left, bisect_right
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from itertools import compress, repeat
from operator import attrgetter, is_
from sys import getsizeof

import numpy as np

from inferwatch.model import Labels, check_deadline, pinned
from inferwatch.store._protocol import Series

__all__ = [
    "ACCEPTED", "BLOCK", "DUPLICATE", "NEWEST_WIDE", "NOOP", "OUT_OF_ORDER", "Head", "SampleBuffer",
    "classify", "newest",
]

ACCEPTED, NOOP, OUT_OF_ORDER, DUPLICATE = 0, 1, 2, 3
READ_CHUNK = 2048  # series read under one hold of the store's lock
BLOCK = 8192
"""Items per C-level loop (``map`` over a batch): one over a 200,000-series scrape held the
interpreter lock for 0.1-0.2 s on a busy machine, and the rule round's thread waited that long."""
NEWEST_WIDE = 64  # an instant read over more series than this takes their newest samples from columns
_EMPTY = np.empty(0, dtype=np.float64)
_EMPTY.flags.writeable = False
_T, _V = attrgetter("t"), attrgetter("v")


def _same_value(a: float, b: float) -> bool:
    if a == b:
        return True
    return math.isnan(a) and math.isnan(b) and struct.pack("<d", a) == struct.pack("<d", b)


def classify(prev: tuple[float, float] | None, t: float, v: float) -> int:
    """Classify sample ``(t, v)`` against a series' newest ``prev``."""
    if prev is None or t > prev[0]:
        return ACCEPTED
    if t < prev[0]:
        return OUT_OF_ORDER
    return NOOP if _same_value(v, prev[1]) else DUPLICATE


def newest(ids: list[int], last_t: np.ndarray, last_v: np.ndarray, start: float, end: float,
           labels: Callable[[int], Labels]) -> tuple[list[int], list[Series]]:
    """Series whose newest sample (``last_t[sid]``, ``last_v[sid]``) lies in ``[start, end]``: that
    sample, picked for all at once; the ids of those with a sample after ``end`` are left to the
    head's read. The caller holds the store's lock and knows ``start`` is in the head.
    """
    sids = np.fromiter(ids, dtype=np.int64, count=len(ids))
    t = last_t[sids]
    pick = np.flatnonzero((t >= start) & (t <= end))
    t_all, v_all = t[pick], last_v[sids[pick]]
    out = [Series(labels(sid), t_all[k:k + 1], v_all[k:k + 1]) for k, sid in enumerate(sids[pick].tolist())]
    return sids[t > end].tolist(), out


class SampleBuffer:
    """One series' samples, ascending in time, in ``array('d')`` buffers (cheap to append)."""

    __slots__ = ("t", "v")

    def __init__(self) -> None:
        self.t = array("d")
        self.v = array("d")

    @property
    def n(self) -> int:
        """How many samples are held."""
        return len(self.t)

    def push(self, t: float, v: float) -> None:
        """Append one sample (the caller has checked the order)."""
        self.t.append(t)
        self.v.append(v)

    def extend(self, t: np.ndarray, v: np.ndarray) -> None:
        """Append ascending samples newer than the newest held."""
        self.t.frombytes(np.ascontiguousarray(t, dtype=np.float64).tobytes())
        self.v.frombytes(np.ascontiguousarray(v, dtype=np.float64).tobytes())

    def window(self, start: float, end: float) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the samples with ``start <= t <= end`` (later appends never change them)."""
        ts = self.t
        n = len(ts)
        if n == 0:
            return _EMPTY, _EMPTY
        lo = 0 if ts[0] >= start else bisect_left(ts, start)
        hi = n if ts[n - 1] <= end else bisect_right(ts, end)
        if lo >= hi:
            return _EMPTY, _EMPTY
        return np.frombuffer(ts[lo:hi], dtype=np.float64), np.frombuffer(self.v[lo:hi], dtype=np.float64)

    def drop_before(self, t: float) -> int:
        """Remove samples older than ``t``; return how many went."""
        cut = bisect_left(self.t, t)
        if cut:
            del self.t[:cut]
            del self.v[:cut]
        return cut


class Head:
    """Sample buffers keyed by series id, plus each series' newest sample for order checks.

    The newest sample is remembered even after its buffer is truncated, so
    the order rules hold across truncation.
    """

    def __init__(self) -> None:
        self.buffers: dict[int, SampleBuffer] = {}
        self.last: dict[int, tuple[float, float]] = {}

    def check(self, sid: int, t: float, v: float) -> int:
        """Classify a sample against the series' newest: ACCEPTED, NOOP, OUT_OF_ORDER, DUPLICATE."""
        return classify(self.last.get(sid), t, v)

    def push(self, sid: int, t: float, v: float, *, buffer: bool = True) -> None:
        """Record an accepted sample (into the buffer too unless ``buffer`` is false)."""
        self.last[sid] = (t, v)
        if buffer:
            buf = self.buffers.get(sid)
            if buf is None:
                buf = self.buffers[sid] = SampleBuffer()
            buf.push(t, v)

    def push_columns(self, sids: np.ndarray, t: np.ndarray, v: np.ndarray, head_from: float) -> None:
        """Append accepted samples (ascending in time per series) from ``head_from`` on.

        One C-level pass a column (the buffers' lookups, then ``array.append``): no Python
        frame per sample, and one per new series only.
        """
        if t.shape[0] and float(t.min()) < head_from:
            keep = t >= head_from
            sids, t, v = sids[keep], t[keep], v[keep]
        ids = sids.tolist()
        buffers = self.buffers
        bufs = list(map(buffers.get, ids))
        if None in bufs:
            for k in compress(range(len(bufs)), map(is_, bufs, repeat(None))):
                sid = ids[k]
                buf = buffers.get(sid)  # a new series seen earlier in this batch
                if buf is None:
                    buf = buffers[sid] = SampleBuffer()
                bufs[k] = buf
        for a in range(0, len(bufs), BLOCK):  # a block per C-level call: the interpreter lock is shared
            part = bufs[a:a + BLOCK]
            deque(map(array.append, map(_T, part), t[a:a + BLOCK].tolist()), maxlen=0)
            deque(map(array.append, map(_V, part), v[a:a + BLOCK].tolist()), maxlen=0)

    def window(self, sid: int, start: float, end: float) -> tuple[np.ndarray, np.ndarray]:
        """The buffered samples of ``sid`` in ``[start, end]``."""
        buf = self.buffers.get(sid)
        if buf is None:
            return _EMPTY, _EMPTY
        return buf.window(start, end)

    def before(self, sid: int, end: float) -> tuple[float, float]:
        """``sid``'s newest buffered sample at or before ``end``; ``(-inf, 0.0)`` when none is held."""
        buf = self.buffers.get(sid)
        k = bisect_right(buf.t, end) if buf is not None else 0
        return (buf.t[k - 1], buf.v[k - 1]) if buf is not None and k else (-math.inf, 0.0)

    def read(self, ids: list[int], start: float, end: float, labels: Callable[[int], Labels],
             lock: AbstractContextManager[object], *, latest: bool = False) -> list[Series]:
        """The series ``ids`` in ``[start, end]`` (``latest``: only each one's last sample there), taking
        ``lock`` a chunk of series at a time.

        A wide read never holds back an append or a rule round's read for long, and between
        chunks a query checks its deadline and may wait for a rule round (``model.Priority``).
        """
        out: list[Series] = []
        for a in range(0, len(ids), READ_CHUNK):
            check_deadline()
            with lock, pinned():
                names, t_all, v_all, sizes = self._read_chunk(
                    ids[a:a + READ_CHUNK], start, end, labels, latest)
            ends = np.cumsum(np.array(sizes, dtype=np.int64)).tolist()
            bounds = zip(names, [0, *ends], ends, strict=False)
            out += [Series(ls, t_all[b:e], v_all[b:e]) for ls, b, e in bounds]
        return out

    def read_columns(self, ids: list[int], start: float, end: float, labels: Callable[[int], Labels],
                     lock: AbstractContextManager[object],
                     ) -> tuple[list[Labels], np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`read` as columns: the labels of the series with samples in ``[start, end]``, all their
        times and values end to end, and how many each has (no object per series)."""
        names: list[Labels] = []
        ts, vs, sizes = [], [], []
        for a in range(0, len(ids), READ_CHUNK):
            check_deadline()
            with lock, pinned():
                got, t_all, v_all, n = self._read_chunk(ids[a:a + READ_CHUNK], start, end, labels, False)
            names += got
            ts.append(t_all)
            vs.append(v_all)
            sizes += n
        lens = np.array(sizes, dtype=np.int64)
        return names, np.concatenate([_EMPTY, *ts]), np.concatenate([_EMPTY, *vs]), lens

    def _read_chunk(self, ids: list[int], start: float, end: float, labels: Callable[[int], Labels],
                    latest: bool) -> tuple[list[Labels], np.ndarray, np.ndarray, list[int]]:
        """One chunk of ``read``: one array of all its times and one of all its values (the caller holds
        the lock: a view pins its buffer, so none outlives the call).

        No array per series: their small blocks, freed between the head's growing buffers, left the
        heap fragmented for good under concurrent readers (RSS grew 3x the head's own bytes).
        """
        names: list[Labels] = []
        ts: list[memoryview] = []
        vs: list[memoryview] = []
        get = self.buffers.get
        try:
            for sid in ids:
                buf = get(sid)
                if buf is None or not buf.t:
                    continue
                t = buf.t
                n = len(t)
                lo = 0 if t[0] >= start else bisect_left(t, start)
                hi = n if t[n - 1] <= end else bisect_right(t, end)
                if lo < hi:
                    if latest:
                        lo = hi - 1
                    names.append(labels(sid))
                    ts.append(memoryview(t)[lo:hi])
                    vs.append(memoryview(buf.v)[lo:hi])
            t_all = np.frombuffer(bytearray().join(ts), dtype=np.float64)
            v_all = np.frombuffer(bytearray().join(vs), dtype=np.float64)
            return names, t_all, v_all, [len(x) for x in ts]
        finally:
            ts.clear()
            vs.clear()

    def memory(self) -> tuple[int, int]:
        """``(samples, bytes)`` held: the buffers' arrays with their spare room, their objects, the map."""
        samples = size = 0
        for buf in list(self.buffers.values()):  # a snapshot: appends may add series meanwhile
            samples += len(buf.t)
            size += getsizeof(buf.t) + getsizeof(buf.v) + getsizeof(buf)
        return samples, size + getsizeof(self.buffers)

    def drop_before(self, t: float) -> int:
        """Truncate every buffer before ``t``; empty buffers are released."""
        dropped = 0
        for sid in list(self.buffers):
            buf = self.buffers[sid]
            dropped += buf.drop_before(t)
            if buf.n == 0:
                del self.buffers[sid]
        return dropped

    def forget(self, sid: int) -> None:
        """Remove everything about series ``sid``."""
        self.buffers.pop(sid, None)
        self.last.pop(sid, None)
