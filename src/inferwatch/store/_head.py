"""In-memory sample buffers per series: the memory store, and the SQLite store's head.

Each series keeps growable numpy buffers; reads return read-only views of
the filled part, so a read never copies and later appends never change it
(appends write past the view; truncation allocates new buffers).
"""

from __future__ import annotations

import math
import struct

import numpy as np

__all__ = ["ACCEPTED", "DUPLICATE", "NOOP", "OUT_OF_ORDER", "Head", "SampleBuffer", "classify"]

ACCEPTED, NOOP, OUT_OF_ORDER, DUPLICATE = 0, 1, 2, 3
_EMPTY = np.empty(0, dtype=np.float64)
_EMPTY.flags.writeable = False


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


class SampleBuffer:
    """One series' samples, ascending in time."""

    __slots__ = ("n", "t", "v")

    def __init__(self, capacity: int = 8) -> None:
        self.t = np.empty(capacity, dtype=np.float64)
        self.v = np.empty(capacity, dtype=np.float64)
        self.n = 0

    def push(self, t: float, v: float) -> None:
        """Append one sample (the caller has checked the order)."""
        n = self.n
        if n == self.t.shape[0]:
            self._grow(2 * n + 8)
        self.t[n] = t
        self.v[n] = v
        self.n = n + 1

    def _grow(self, capacity: int) -> None:
        t = np.empty(capacity, dtype=np.float64)
        v = np.empty(capacity, dtype=np.float64)
        t[: self.n] = self.t[: self.n]
        v[: self.n] = self.v[: self.n]
        self.t, self.v = t, v

    def window(self, start: float, end: float) -> tuple[np.ndarray, np.ndarray]:
        """Read-only views of the samples with ``start <= t <= end``."""
        ts = self.t[: self.n]
        lo = 0 if self.n == 0 or ts[0] >= start else int(np.searchsorted(ts, start, "left"))
        hi = self.n if self.n == 0 or ts[-1] <= end else int(np.searchsorted(ts, end, "right"))
        if lo >= hi:
            return _EMPTY, _EMPTY
        t, v = ts[lo:hi], self.v[lo:hi]
        t.flags.writeable = False
        v.flags.writeable = False
        return t, v

    def drop_before(self, t: float) -> int:
        """Remove samples older than ``t`` into new buffers; return how many went."""
        cut = int(np.searchsorted(self.t[: self.n], t, "left"))
        if cut == 0:
            return 0
        keep = self.n - cut
        nt = np.empty(max(keep, 8), dtype=np.float64)
        nv = np.empty(max(keep, 8), dtype=np.float64)
        nt[:keep] = self.t[cut : self.n]
        nv[:keep] = self.v[cut : self.n]
        self.t, self.v, self.n = nt, nv, keep
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

    def window(self, sid: int, start: float, end: float) -> tuple[np.ndarray, np.ndarray]:
        """The buffered samples of ``sid`` in ``[start, end]``."""
        buf = self.buffers.get(sid)
        if buf is None:
            return _EMPTY, _EMPTY
        return buf.window(start, end)

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
