"""Selectors over all the steps of a range query at once: lookback for instant selectors, windows for ranges.

Each series was loaded once for the whole query (:mod:`._data`); here every
step's sample (instant selector) or window ``[ref - range, ref]`` (range
selector) is found with ``searchsorted`` over the step times, and the window
functions ``rate``, ``increase``, ``delta``, ``irate``, ``idelta`` and the
common ``*_over_time`` run on whole ``(series, steps)`` arrays, a chunk of
series at a time so temporary memory stays bounded. The arithmetic is the
instant kernels' (:mod:`._kernels`), operation for operation, so results are
bit-identical; a ``rate`` window that holds a counter reset is handed to the
instant kernel itself (Go adds each reset in turn).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

from inferwatch.model import Labels, check_deadline
from inferwatch.promql._batch import LoadedBatch, SharedBatch, StreamedBatch
from inferwatch.promql._data import Loaded
from inferwatch.promql._kernels import extrapolated_rate
from inferwatch.promql._rows import Fallback, Rows
from inferwatch.promql._values import Vector, drop_name
from inferwatch.store import stale_mask

__all__ = ["WINDOW_FUNCTIONS", "batch_window", "instant_rows", "window_presence", "window_rows"]

_CHUNK_CELLS = 1 << 17  # (series × steps) cells per chunk: 1 MiB per temporary float array


def instant_rows(series: Sequence[Loaded], refs: np.ndarray, lookback: int) -> Rows:
    """Each series' latest sample in ``[ref - lookback, ref]`` per step, unless a staleness marker."""
    return _latest_rows(series, refs, lookback, times=False)


def sample_times(series: Sequence[Loaded], refs: np.ndarray, lookback: int) -> Rows:
    """``timestamp(selector)``: the time (s) of the sample :func:`instant_rows` picks, name dropped."""
    return _latest_rows(series, refs, lookback, times=True)


def _latest_rows(series: Sequence[Loaded], refs: np.ndarray, lookback: int, *, times: bool) -> Rows:
    """The lookback pick per series and step: its values, or (``times``) its times with the name dropped.

    A chunk of series at a time (temporaries stay small, the deadline is checked between chunks):
    their times are laid end to end on one axis (series ``i`` at ``i * width`` onwards), so one
    ``searchsorted`` finds every series' sample at every step. A :class:`LoadedBatch` is read
    as the columns it is; a :class:`StreamedBatch` a batch of series at a time (its samples are
    never all held at once).
    """
    if not len(refs):
        return Rows.empty(len(refs))
    if isinstance(series, StreamedBatch) and not series.whole:
        labels: list[Labels] = []
        picks: list[tuple[np.ndarray, np.ndarray]] = []
        for part in series.batches():
            labels += part.labels
            picks += _part_picks(part, refs, lookback, times)
        if len(labels) == len(series.kept):  # every series had samples: the store's list, as select_columns
            labels = series.kept
    elif isinstance(series, LoadedBatch):
        labels = series.labels
        picks = _part_picks(series, refs, lookback, times)
    else:
        kept = [s for s in series if len(s.t)]
        labels = [s.labels for s in kept]
        off = np.zeros(len(kept) + 1, dtype=np.int64)
        np.cumsum(np.fromiter((len(s.t) for s in kept), dtype=np.int64, count=len(kept)), out=off[1:])
        picks = _picks(off, _joined(kept), refs, lookback, times) if kept else []
    if not labels:
        return Rows.empty(len(refs))
    keep = np.concatenate([ok.any(axis=1) for _, ok in picks])
    vals = np.vstack([v for v, _ in picks])
    ok = np.vstack([m for _, m in picks])
    if not keep.all():
        rows = np.flatnonzero(keep)
        labels = [labels[i] for i in rows.tolist()]
        vals, ok = vals[rows], ok[rows]
    return Rows([drop_name(ls) for ls in labels] if times else labels, vals, ok)  # the store's list, if all


def _part_picks(part: LoadedBatch, refs: np.ndarray, lookback: int, times: bool,
                ) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`_picks` of a batch; of a :class:`SharedBatch`, found once on its one row of times."""
    if not isinstance(part, SharedBatch):
        return _picks(part.off, (part.t, part.v, part.stale), refs, lookback, times)
    row = part.row
    idx = np.searchsorted(row, refs, side="right") - 1
    safe = np.maximum(idx, 0)
    found = (idx >= 0) & (row[safe] >= refs - lookback)
    picked = part.take(safe)
    ok = found[None, :] & ~stale_mask(picked)
    return [(np.repeat((row[safe] / 1000)[None, :], len(picked), axis=0) if times else picked, ok)]


def _picks(off: np.ndarray, cols: tuple[np.ndarray, np.ndarray, np.ndarray], refs: np.ndarray, lookback: int,
           times: bool) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`_latest_chunk` over the series ``off`` delimits, a chunk of them at a time."""
    per = max(1, _CHUNK_CELLS // len(refs))
    return [_latest_chunk(off[i:i + per + 1], cols, refs, lookback, times)
            for i in _chunk_starts(len(off) - 1, per)]


def _joined(series: list[Loaded]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The series' times, values and staleness end to end."""
    if not series:
        return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=bool)
    return (np.concatenate([s.t for s in series]), np.concatenate([s.v for s in series]),
            np.concatenate([s.stale for s in series]))


def _chunk_starts(n: int, per: int) -> Iterator[int]:
    for i in range(0, n, per):
        check_deadline()
        yield i


def _latest_chunk(off: np.ndarray, cols: tuple[np.ndarray, np.ndarray, np.ndarray], refs: np.ndarray,
                  lookback: int, times: bool) -> tuple[np.ndarray, np.ndarray]:
    """The pick for the series whose samples are ``cols[off[0]:off[-1]]`` (series ``k`` from ``off[k]``)."""
    a, b = int(off[0]), int(off[-1])
    t, v, stale = cols[0][a:b], cols[1][a:b], cols[2][a:b]
    starts = off[:-1] - a
    lens = np.diff(off)
    base = min(int(t.min()), int(refs.min())) - 1
    width = max(int(t.max()), int(refs.max())) - base + 1
    lanes = np.arange(len(lens), dtype=np.int64) * width
    idx = np.searchsorted(np.repeat(lanes, lens) + (t - base), lanes[:, None] + (refs - base)[None, :],
                          side="right") - 1
    safe = np.maximum(idx, 0)
    ok = (idx >= starts[:, None]) & (t[safe] >= (refs - lookback)[None, :])
    ok &= ~stale[safe]
    return (t[safe] / 1000 if times else v[safe]), ok


class _Chunk:
    """Some series' live samples concatenated, with each step's window as ``[a, a + n)``."""

    def __init__(self, series: list[Loaded], refs: np.ndarray, range_ms: int) -> None:
        lens = np.array([len(s.live_t) for s in series], dtype=np.int64)
        off = np.zeros(len(series) + 1, dtype=np.int64)
        np.cumsum(lens, out=off[1:])
        self.t = np.concatenate([s.live_t for s in series]) if off[-1] else np.zeros(1, dtype=np.int64)
        self.v = np.concatenate([s.live_v for s in series]) if off[-1] else np.zeros(1)
        self.starts = off[:-1]
        lo = refs - range_ms
        self.lo = lo
        self.hi = refs
        self.a = np.empty((len(series), len(refs)), dtype=np.int64)
        self.n = np.empty_like(self.a)
        for i, s in enumerate(series):
            a = s.live_t.searchsorted(lo, side="left")
            self.n[i] = s.live_t.searchsorted(refs, side="right") - a
            self.a[i] = a + off[i]


def _chunks(series: list[Loaded], steps: int) -> Iterator[list[Loaded]]:
    size = max(1, _CHUNK_CELLS // max(steps, 1))
    for i in range(0, len(series), size):
        yield series[i:i + size]


Window = Callable[[_Chunk, float], tuple[np.ndarray, np.ndarray]]


def _extrapolated(is_counter: bool, is_rate: bool) -> Window:
    def run(c: _Chunk, range_s: float) -> tuple[np.ndarray, np.ndarray]:
        ok = c.n >= 2
        a = np.where(ok, c.a, 0)
        b = np.where(ok, c.a + c.n - 1, 0)
        fv, lv = c.v[a], c.v[b]
        ft, lt = c.t[a], c.t[b]
        with np.errstate(all="ignore"):  # inf - inf is NaN, as Go's float arithmetic gives
            result = lv - fv
            dts = (ft - c.lo) / 1000
            dte = (c.hi - lt) / 1000
            sampled = (lt - ft) / 1000
            avg = sampled / (c.n - 1)
            if is_counter:
                dtz = sampled * (fv / result)
                dts = np.where((result > 0) & (fv >= 0) & (dtz < dts), dtz, dts)
            threshold = avg * 1.1
            half = avg / 2
            interval = sampled + np.where(dts < threshold, dts, half)
            interval = interval + np.where(dte < threshold, dte, half)
            factor = interval / sampled
            if is_rate:
                factor = factor / range_s
            out = result * factor
        if is_counter:
            drops = np.zeros(len(c.v), dtype=np.int64)
            drops[1:] = c.v[1:] < c.v[:-1]
            drops[c.starts] = 0  # the first sample of a series follows another series' last
            seen = np.cumsum(drops)
            reset = ok & (seen[b] != seen[a])
            for i, j in zip(*np.nonzero(reset), strict=True):
                lo, hi = int(c.a[i, j]), int(c.a[i, j] + c.n[i, j])
                r = extrapolated_rate(c.t[lo:hi], c.v[lo:hi], int(c.lo[j]), int(c.hi[j]), range_s,
                                      is_counter=True, is_rate=is_rate)
                out[i, j] = r
        return out, ok

    return run


def _instant_delta(is_rate: bool) -> Window:
    def run(c: _Chunk, _: float) -> tuple[np.ndarray, np.ndarray]:
        ok = c.n >= 2
        b = np.where(ok, c.a + c.n - 1, 0)
        p = np.maximum(b - 1, 0)
        last, prev = c.v[b], c.v[p]
        dt = c.t[b] - c.t[p]
        ok &= dt != 0
        with np.errstate(all="ignore"):
            if is_rate:
                return np.where(last < prev, last, last - prev) / (dt / 1000), ok
            return last - prev, ok

    return run


def _count(c: _Chunk, _: float) -> tuple[np.ndarray, np.ndarray]:
    return c.n.astype(np.float64), c.n > 0


def _present(c: _Chunk, _: float) -> tuple[np.ndarray, np.ndarray]:
    return np.ones(c.n.shape), c.n > 0


def _last(c: _Chunk, _: float) -> tuple[np.ndarray, np.ndarray]:
    ok = c.n > 0
    return c.v[np.where(ok, c.a + c.n - 1, 0)], ok


def _sequential(step: Callable[[np.ndarray, np.ndarray, int], np.ndarray], *, start_zero: bool) -> Window:
    """Fold the window's points in order, vectorised across windows (the k-th point of every window)."""

    def run(c: _Chunk, _: float) -> tuple[np.ndarray, np.ndarray]:
        ok = c.n > 0
        first = np.where(ok, c.a, 0)
        acc = np.zeros(c.n.shape) if start_zero else c.v[first]
        widest = int(c.n.max()) if c.n.size else 0
        with np.errstate(all="ignore"):
            for k in range(0 if start_zero else 1, widest):
                active = c.n > k
                x = c.v[np.where(active, c.a + k, 0)]
                acc = np.where(active, step(acc, x, k), acc)
        return acc, ok

    return run


def _mean_step(mean: np.ndarray, x: np.ndarray, k: int) -> np.ndarray:
    count = k + 1  # go_mean's incremental mean, with its infinity rules
    skip = np.isinf(mean) & ((np.isinf(x) & ((mean > 0) == (x > 0))) | np.isfinite(x))
    return np.where(skip, mean, mean + (x / count - mean / count))


WINDOW_FUNCTIONS: dict[str, Window] = {
    "rate": _extrapolated(True, True),
    "increase": _extrapolated(True, False),
    "delta": _extrapolated(False, False),
    "irate": _instant_delta(True),
    "idelta": _instant_delta(False),
    "count_over_time": _count,
    "present_over_time": _present,
    "last_over_time": _last,
    "sum_over_time": _sequential(lambda acc, x, _: acc + x, start_zero=True),
    "avg_over_time": _sequential(_mean_step, start_zero=False),
    "max_over_time": _sequential(lambda o, x, _: np.where((x > o) | np.isnan(o), x, o), start_zero=False),
    "min_over_time": _sequential(lambda o, x, _: np.where((x < o) | np.isnan(o), x, o), start_zero=False),
}


def window_rows(func: str, series: Sequence[Loaded], refs: np.ndarray, range_ms: int, range_s: float,
                poll: Callable[[], None]) -> Rows:
    """``func`` of every series' window at every step (name dropped but by ``last_over_time``)."""
    fn = WINDOW_FUNCTIONS.get(func)
    if fn is None:
        raise Fallback(func)
    live = [s for s in series if len(s.live_t)]
    vals = np.empty((len(live), len(refs)))
    mask = np.empty((len(live), len(refs)), dtype=bool)
    done = 0
    for part in _chunks(live, len(refs)):
        poll()
        vals[done:done + len(part)], mask[done:done + len(part)] = fn(_Chunk(part, refs, range_ms), range_s)
        done += len(part)
    keep = func == "last_over_time"
    return Rows([s.labels if keep else drop_name(s.labels) for s in live], vals, mask).compact()


def window_presence(series: Sequence[Loaded], refs: np.ndarray, range_ms: int) -> np.ndarray:
    """Per step, whether any series has a live sample in its window (``absent_over_time``)."""
    out = np.zeros(len(refs), dtype=bool)
    for s in series:
        a = s.live_t.searchsorted(refs - range_ms, side="left")
        out |= s.live_t.searchsorted(refs, side="right") > a
    return out

# -- one step over a columnar batch ---------------------------------------------------------------
# An instant query (a rule) evaluated ``rate`` series by series: a window found by two ``searchsorted``
# per series, then the kernel in Python, ~10 µs a series, the most of the default pack's round. A
# selection loaded as one LoadedBatch holds every series' samples in one array, so each series' window
# at the step is found for all at once (its live samples before the window and inside it, counted per
# series), and the window functions above compute every value in one go: the per-series path's answer
# (same series, same order, same bits).


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
    chunk = object.__new__(_Chunk)  # the windows over these arrays, at one step
    chunk.t, chunk.v, chunk.starts = t, v, off[:-1]
    chunk.lo, chunk.hi = np.array([lo], dtype=np.int64), np.array([ref], dtype=np.int64)
    chunk.a, chunk.n = (off[:-1] + before)[:, None], inside[:, None]
    vals, ok = fn(chunk, range_s)
    keep = func == "last_over_time"
    labels = batch.labels
    picked = rows[ok[:, 0]].tolist()
    values = vals[ok[:, 0], 0].tolist()
    return [(labels[i] if keep else drop_name(labels[i]), x) for i, x in zip(picked, values, strict=True)]
