"""A window function over a wide selection at one step, as whole arrays: ``rate(x[5m])`` over 6,000 series.

An instant query (a rule) evaluated ``rate`` series by series: a window found by two
``searchsorted`` per series, then the kernel in Python, ~10 µs a series, the most of
the default pack's round. A selection loaded as one :class:`~._batch.LoadedBatch` holds
every series' samples in one array, so each series' window at the step is found for all
at once (its live samples before the window and inside it, counted per series), and the
range path's window functions (:data:`~._range_windows.WINDOW_FUNCTIONS`, the instant
kernels' arithmetic operation for operation, bit-identical) compute every value in one go.
The result is the per-series path's: same series, same order, same values.
"""

from __future__ import annotations

import numpy as np

from inferwatch.promql._batch import LoadedBatch
from inferwatch.promql._range_windows import WINDOW_FUNCTIONS, _Chunk
from inferwatch.promql._values import Vector, drop_name

__all__ = ["batch_window"]


def batch_window(func: str, batch: LoadedBatch, ref: int, range_ms: int, range_s: float) -> Vector | None:
    """``func`` of every series' live window ``[ref - range_ms, ref]`` (ms), in the batch's order, name
    dropped but by ``last_over_time``; ``None`` for a function this path does not compute."""
    fn = WINDOW_FUNCTIONS.get(func)
    if fn is None:
        return None
    n = len(batch.lens)
    owner = np.repeat(np.arange(n), batch.lens)
    live = ~batch.stale
    t, v = batch.t, batch.v
    if not live.all():
        t, v, owner = t[live], v[live], owner[live]
    lens = np.bincount(owner, minlength=n)
    rows = np.flatnonzero(lens)  # series with a live sample: the per-series path's Matrix keeps only these
    if not len(rows):
        return []
    lo = ref - range_ms
    before = np.bincount(owner[t < lo], minlength=n)[rows]
    inside = np.bincount(owner[(t >= lo) & (t <= ref)], minlength=n)[rows]
    off = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lens[rows], out=off[1:])
    chunk = object.__new__(_Chunk)  # the range path's window over these arrays, at one step
    chunk.t, chunk.v, chunk.starts = t, v, off[:-1]
    chunk.lo, chunk.hi = np.array([lo], dtype=np.int64), np.array([ref], dtype=np.int64)
    chunk.a, chunk.n = (off[:-1] + before)[:, None], inside[:, None]
    vals, ok = fn(chunk, range_s)
    keep = func == "last_over_time"
    labels = batch.labels
    picked = rows[ok[:, 0]].tolist()
    values = vals[ok[:, 0], 0].tolist()
    return [(labels[i] if keep else drop_name(labels[i]), x) for i, x in zip(picked, values, strict=True)]
