"""In-memory sample buffers per series: the memory store, and the SQLite store's head.

Each series appends to ``array('d')`` buffers (an append is a C call); every ``CHUNK`` samples
the oldest are closed into a compact chunk (:mod:`inferwatch.store._chunk`: ~8 bytes a sample of
random full-precision values, a few for counters, against 16 raw plus the arrays' spare room).
A read decodes only the chunks its window touches, many series' at once, and copies the window
into numpy arrays, so readers own what they get.
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
from inferwatch.store._chunk import decode, encode, samples_in
from inferwatch.store._head_read import read_block, read_shared
from inferwatch.store._protocol import Series
from inferwatch.store._shared import SeriesColumns, SharedBlock, SharedColumns

__all__ = [
    "ACCEPTED", "BLOCK", "CHUNK", "DUPLICATE", "NEWEST_WIDE", "NOOP", "OUT_OF_ORDER", "Head", "SampleBuffer",
    "classify", "newest",
]

ACCEPTED, NOOP, OUT_OF_ORDER, DUPLICATE = 0, 1, 2, 3
READ_CHUNK = 2048  # series read under one hold of the store's lock
BLOCK = 8192
"""Items per C-level loop (``map`` over a batch): one over a 200,000-series scrape held the
interpreter lock for 0.1-0.2 s on a busy machine, and the rule round's thread waited that long."""
CHUNK = 32
"""Samples per closed chunk. Small enough that a few minutes of 5 s scrapes are mostly compact
(Prometheus compresses its open chunk as it goes; ours is raw until it closes), large enough that
a chunk's fixed cost (a 29-byte header, the ``bytes`` object, its bounds) is ~2.5 bytes a sample."""
NEWEST_WIDE = 64  # an instant read over more series than this takes their newest samples from columns
_EMPTY = np.empty(0, dtype=np.float64)
_EMPTY.flags.writeable = False
_T, _V, _CLOSED = attrgetter("t"), attrgetter("v"), attrgetter("closed")


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


_open = array("d").__copy__  # a new empty array('d'): a third of array("d")'s time (two a new series)


class SampleBuffer:
    """One series' samples, ascending in time: closed chunks (see :mod:`inferwatch.store._chunk`),
    end to end in one ``bytes``, and an open part in ``array('d')`` buffers (cheap to append).

    ``bounds`` holds each chunk's first and last time, in turn, ``ends`` where each ends in ``data``;
    ``closed`` counts their samples. One object for all of a series' chunks: an object each cost
    ~1 byte a sample more.
    """

    __slots__ = ("bounds", "closed", "data", "ends", "t", "v")

    def __init__(self) -> None:
        self.t = _open()
        self.v = _open()
        self.data: bytes | None = None  # none until the first chunk closes (most series are small)
        self.bounds: array[float] | None = None
        self.ends: array[int] | None = None
        self.closed = 0

    @property
    def n(self) -> int:
        """How many samples are held."""
        return len(self.t) + self.closed

    def nbytes(self) -> int:
        """Bytes held: the object, its open arrays with their spare room, its chunks."""
        size = getsizeof(self) + getsizeof(self.t) + getsizeof(self.v)
        if self.data is not None:
            size += getsizeof(self.data) + getsizeof(self.bounds) + getsizeof(self.ends)
        return size

    def push(self, t: float, v: float) -> None:
        """Append one sample (the caller has checked the order)."""
        self.t.append(t)
        self.v.append(v)

    def extend(self, t: np.ndarray, v: np.ndarray) -> None:
        """Append ascending samples newer than the newest held."""
        self.t.frombytes(np.ascontiguousarray(t, dtype=np.float64).tobytes())
        self.v.frombytes(np.ascontiguousarray(v, dtype=np.float64).tobytes())

    def close(self, chunk: bytes, first: float, last: float, n: int) -> None:
        """Move the open part's first ``n`` samples, encoded as ``chunk``, into the closed chunks."""
        if self.data is None or self.bounds is None or self.ends is None:
            self.data, self.bounds, self.ends = chunk, array("d", (first, last)), array("I", (len(chunk),))
        else:
            self.data += chunk
            self.bounds.append(first)
            self.bounds.append(last)
            self.ends.append(len(self.data))
        del self.t[:n]
        del self.v[:n]
        self.closed += n

    def chunk(self, k: int) -> bytes:
        """Closed chunk ``k`` (0: the oldest)."""
        assert self.data is not None and self.ends is not None
        return self.data[self.ends[k - 1] if k else 0:self.ends[k]]

    def window(self, start: float, end: float) -> tuple[np.ndarray, np.ndarray]:
        """Copies of the samples with ``start <= t <= end`` (later appends never change them)."""
        got = read_block([self], start, end, False)
        return (got[1], got[2]) if got[3] else (_EMPTY, _EMPTY)

    def drop_before(self, t: float) -> int:
        """Remove samples older than ``t``; return how many went."""
        cut = 0
        if self.data is not None and self.bounds is not None and self.ends is not None:
            whole = bisect_left(self.bounds, t) // 2  # chunks ending before t go whole
            if whole:
                cut = sum(samples_in(self.chunk(k)) for k in range(whole))
                at = self.ends[whole - 1]
                self.data = self.data[at:]
                del self.bounds[:2 * whole]
                self.ends = array("I", [e - at for e in self.ends[whole:]])
            if self.ends and self.bounds[0] < t:  # the chunk across t keeps its part from t on
                ct, cv = decode([self.chunk(0)])
                keep = ct[0] >= t
                [c] = encode(ct[:, keep], cv[:, keep])
                cut += int((~keep).sum())
                shift = len(c) - self.ends[0]
                self.data = c + self.data[self.ends[0]:]
                self.ends = array("I", [e + shift for e in self.ends])
                self.bounds[0] = float(ct[0][keep][0])
            self.closed -= cut
            if self.ends:
                return cut
            self.data = self.bounds = self.ends = None
        open_cut = bisect_left(self.t, t)
        if open_cut:
            del self.t[:open_cut]
            del self.v[:open_cut]
        return cut + open_cut


class Head:
    """Sample buffers keyed by series id, plus each series' newest sample for order checks.

    The newest sample is remembered even after its buffer is truncated, so
    the order rules hold across truncation.
    """

    def __init__(self) -> None:
        self.buffers: dict[int, SampleBuffer] = {}
        self.last: dict[int, tuple[float, float]] = {}
        self._full: list[SampleBuffer] = []  # buffers whose open part holds a chunk's worth: see seal

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
            if len(buf.t) == CHUNK:
                self._full.append(buf)

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
        bufs: list[SampleBuffer] = list(map(buffers.get, ids))  # type: ignore[arg-type]  # Nones filled below
        if None in bufs:
            for k in compress(range(len(bufs)), map(is_, bufs, repeat(None))):
                sid = ids[k]
                got = buffers.get(sid)  # a new series seen earlier in this batch
                bufs[k] = got if got is not None else buffers.setdefault(sid, SampleBuffer())
        for a in range(0, len(bufs), BLOCK):  # a block per C-level call: the interpreter lock is shared
            part = bufs[a:a + BLOCK]
            deque(map(array.append, map(_T, part), t[a:a + BLOCK].tolist()), maxlen=0)
            deque(map(array.append, map(_V, part), v[a:a + BLOCK].tolist()), maxlen=0)
            sizes = np.fromiter(map(len, map(_T, part)), dtype=np.int64, count=len(part))
            self._full += [part[k] for k in np.flatnonzero(sizes >= CHUNK).tolist()]

    def seal(self, lock: AbstractContextManager[object], *, everything: bool = False) -> int:
        """Close a chunk of every buffer whose open part holds ``CHUNK`` samples (``everything``: look at
        all buffers, as after a restart's load); return the chunks closed.

        The caller is the only writer (it holds the store's append lock); the encoding runs
        outside ``lock``, a block of buffers at a time, and each block's swap inside it, so readers
        see every series whole, before or after.
        """
        full = list(self.buffers.values()) if everything else self._full
        self._full = []
        closed = 0
        while full := [b for b in dict.fromkeys(full) if len(b.t) >= CHUNK]:
            for a in range(0, len(full), BLOCK):
                part = full[a:a + BLOCK]
                t, v = _oldest(part, _T), _oldest(part, _V)
                chunks = encode(t, v)
                first, last = t[:, 0].tolist(), t[:, -1].tolist()
                with lock:
                    deque(map(SampleBuffer.close, part, chunks, first, last, repeat(CHUNK)), maxlen=0)
                closed += len(part)
        return closed

    def window(self, sid: int, start: float, end: float) -> tuple[np.ndarray, np.ndarray]:
        """The buffered samples of ``sid`` in ``[start, end]``."""
        buf = self.buffers.get(sid)
        if buf is None:
            return _EMPTY, _EMPTY
        return buf.window(start, end)

    def windows(self, ids: list[int], start: float, end: float) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """:meth:`window` of many series, decoded together (the caller holds the lock)."""
        got, t_all, v_all, sizes = read_block(list(map(self.buffers.get, ids)), start, end, False)
        ends = np.cumsum(np.array(sizes, dtype=np.int64)).tolist()
        return {ids[k]: (t_all[a:b], v_all[a:b]) for k, a, b in zip(got, [0, *ends], ends, strict=False)}

    def before(self, sid: int, end: float) -> tuple[float, float]:
        """``sid``'s newest buffered sample at or before ``end``; ``(-inf, 0.0)`` when none is held."""
        buf = self.buffers.get(sid)
        if buf is None:
            return -math.inf, 0.0
        k = bisect_right(buf.t, end)
        if k:
            return buf.t[k - 1], buf.v[k - 1]
        j = bisect_right(buf.bounds, end) if buf.bounds else 0
        if not j:
            return -math.inf, 0.0
        t, v = decode([buf.chunk((j - 1) // 2)])
        k = bisect_right(t[0], end)
        return float(t[0, k - 1]), float(v[0, k - 1])

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

    def read_span(self, ids: list[int], start: float, end: float, labels: Callable[[int], Labels],
                  lock: AbstractContextManager[object]) -> SeriesColumns | SharedColumns:
        """:meth:`read_columns` as :class:`SeriesColumns`; as :class:`SharedColumns` when every series read
        has the same times, bit for bit (a target's series): their values are then decoded only where a
        reader asks for them. Where a block is not shared, the whole span is read the general way again
        (a selection that mixes targets is mostly found out at its first block, before reading much)."""
        names: list[Labels] = []
        blocks: list[SharedBlock] = []
        for a in range(0, len(ids), READ_CHUNK):
            check_deadline()
            part = ids[a:a + READ_CHUNK]
            with lock, pinned():
                got = read_shared(list(map(self.buffers.get, part)), start, end)
                if got is None or (blocks and not _same_row(blocks[0].row, got.row)):
                    break
                if len(got.row):
                    names += map(labels, part)
            blocks.append(got)
        else:
            if blocks and len(blocks[0].row):
                return SharedColumns(names, blocks[0].row, blocks)
            if all(not len(b.row) for b in blocks):
                return SeriesColumns([], _EMPTY, _EMPTY, np.zeros(0, dtype=np.int64))
        return SeriesColumns(*self.read_columns(ids, start, end, labels, lock))

    def _read_chunk(self, ids: list[int], start: float, end: float, labels: Callable[[int], Labels],
                    latest: bool) -> tuple[list[Labels], np.ndarray, np.ndarray, list[int]]:
        """One chunk of ``read`` (the caller holds the lock): see :func:`read_block`."""
        got, t_all, v_all, sizes = read_block(list(map(self.buffers.get, ids)), start, end, latest)
        return [labels(ids[k]) for k in got], t_all, v_all, sizes

    def memory(self) -> tuple[int, int]:
        """``(samples, bytes)`` held: the open arrays with their spare room, the closed chunks with
        their bounds, the buffers' objects, the map."""
        bufs = list(self.buffers.values())  # a snapshot: appends may add series meanwhile
        samples = sum(map(len, map(_T, bufs))) + sum(map(_CLOSED, bufs))
        return samples, sum(map(SampleBuffer.nbytes, bufs)) + getsizeof(self.buffers)

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


def _same_row(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool((a.view(np.int64) == b.view(np.int64)).all())


def _oldest(bufs: list[SampleBuffer], part: Callable[[SampleBuffer], array[float]]) -> np.ndarray:
    """The oldest ``CHUNK`` samples of each buffer's open ``part`` (times or values), a row each."""
    views = [memoryview(x)[:CHUNK] for x in map(part, bufs)]
    try:
        return np.frombuffer(bytearray().join(views), dtype=np.float64).reshape(len(bufs), CHUNK)
    finally:
        views.clear()  # no view may outlive this: a buffer with one cannot be resized
