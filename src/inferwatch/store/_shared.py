"""A span of many series as columns, and the form it takes for series scraped together: one row of
times and their values decoded only where a reader asks (a range query's step picks: 41 samples of a
series' 180 in a 10-minute query at 15 s over 5 s scrapes).

>>> import numpy as np
>>> block = SharedBlock(np.array([10.0, 20.0]), None, 0, np.array([[1.0, 2.0], [3.0, 4.0]]))
>>> cols = SharedColumns(["a", "b"], block.row, [block])  # (labels: any list)
>>> cols.t.tolist(), cols.v.tolist(), cols.take(np.array([1])).tolist(), cols.samples
([10.0, 20.0, 10.0, 20.0], [1.0, 2.0, 3.0, 4.0], [[2.0], [4.0]], 4)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from inferwatch.store._chunk import RAW, decode_values, time_bytes

__all__ = ["SeriesColumns", "SharedBlock", "SharedColumns"]


@dataclass
class SeriesColumns:
    """Series with samples in a span, end to end: ``labels[i]`` has ``lens[i]`` samples, in order, of
    ``t`` (seconds) and ``v``; labels sorted as ``select`` sorts."""

    labels: list[Any]
    t: np.ndarray
    v: np.ndarray
    lens: np.ndarray
    row = None  # see SharedColumns

    @property
    def samples(self) -> int:
        """How many samples (times and values) the columns hold."""
        return len(self.t)


class SharedBlock:
    """Series scraped together, read under the store's lock: their times once (``row``, seconds: the
    closed chunks' part from sample ``skip`` of chunk ``first`` on, then the open part) and their values,
    kept as the closed chunks' bytes (``closed``: series x chunks x bytes, every chunk of one shape,
    copied out of the head) and the open part's matrix, decoded when asked for."""

    def __init__(self, row: np.ndarray, closed: np.ndarray | None, skip: int, opened: np.ndarray,
                 first: int = 0) -> None:
        self.row, self._closed, self._skip, self._open, self._first = row, closed, skip, opened, first
        self._in_closed = len(row) - opened.shape[1]  # how many of the row's times are in the chunks

    def matrix(self) -> np.ndarray:
        """Every value, a ``(series, len(row))`` matrix."""
        return self.take(np.arange(len(self.row)))

    def take(self, cols: np.ndarray) -> np.ndarray:
        """The values at the row's positions ``cols``, a ``(series, len(cols))`` matrix; only the chunks
        that hold them are decoded (a chunk of raw values not at all: its values are read in place)."""
        m = self._open.shape[0]
        cols = np.asarray(cols, dtype=np.int64)
        out = np.empty((m, len(cols)))
        shut = cols < self._in_closed
        if not shut.all():
            out[:, ~shut] = self._open[:, cols[~shut] - self._in_closed]
        if shut.any() and self._closed is not None:
            out[:, shut] = self._closed_values(cols[shut] + self._skip)
        return out

    def _closed_values(self, at: np.ndarray) -> np.ndarray:
        """The values at chunk samples ``at`` (counted from the first chunk kept)."""
        every = self._closed
        assert every is not None
        m, k, width = every.shape
        per = int(every[0, 0, 0]) | int(every[0, 0, 1]) << 8  # samples a chunk: every chunk is alike
        chunk, within = at // per + self._first, at % per
        if every[0, 0, 4] == RAW:  # values as they are, 8 bytes each after the times: read in place
            values = np.ndarray((m, k, per), dtype=np.float64, buffer=every,  # (not 8-byte aligned)
                                offset=time_bytes(every[0]), strides=(k * width, width, 8))
            return values[:, chunk, within]
        used, slot = np.unique(chunk, return_inverse=True)
        decoded = decode_values(every[:, used].reshape(m * len(used), width)).reshape(m, len(used), per)
        return decoded[:, slot.ravel(), within]


class SharedColumns:
    """:class:`SeriesColumns` of series that share one row of times (``row``, seconds), read as
    :class:`SharedBlock` s: ``t`` and ``v`` are built only for a reader that asks for them; a range query's
    step picks :meth:`take` the values at the row's positions they need."""

    def __init__(self, labels: list[Any], row: np.ndarray, blocks: list[SharedBlock]) -> None:
        self.labels, self.row, self._blocks = labels, row, blocks
        self.lens = np.full(len(labels), len(row), dtype=np.int64)
        self.samples = len(labels) * len(row)
        self._t: np.ndarray | None = None
        self._v: np.ndarray | None = None

    @property
    def t(self) -> np.ndarray:
        """Every series' times end to end (``row`` repeated)."""
        if self._t is None:
            self._t = np.tile(self.row, len(self.labels))
        return self._t

    @property
    def v(self) -> np.ndarray:
        """Every series' values end to end."""
        if self._v is None:
            self._v = np.concatenate([np.zeros(0), *(b.matrix().ravel() for b in self._blocks)])
        return self._v

    def take(self, cols: np.ndarray) -> np.ndarray:
        """The values at the row's positions ``cols``, a ``(series, len(cols))`` matrix."""
        parts = [b.take(cols) for b in self._blocks]
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)
