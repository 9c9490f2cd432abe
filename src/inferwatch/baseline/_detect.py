"""From a scored series to alert windows: debounce, merge, recurrence, peak.

An alert window is one contiguous run of anomalous samples that lasted at
least ``debounce`` samples (Prometheus's ``for``); once firing it bridges up to
``merge_gap`` normal samples (Prometheus's ``keep_firing_for``), so a flapping
episode is one alert, not many. With a :class:`RecurrenceGate`, a window that
only repeats the series' earlier excursions is held: it starts at its first
released sample, or not at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from inferwatch.baseline._band import Baseline, Direction, band_excess, on_side
from inferwatch.baseline._likelihood import NoveltyScorer
from inferwatch.baseline._recurrence import RecurrenceGate

__all__ = ["AlertWindow", "ScoredSeries", "alert_windows", "runs", "score_series"]

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class AlertWindow:
    """One alert: sample indices ``start``..``end`` (inclusive) and its most extreme value."""

    start: int
    end: int
    peak: float


@dataclass(frozen=True, slots=True)
class ScoredSeries:
    """Per-sample expected value, band and anomaly flag (NaN band while history is short).

    ``released``: anomalous and not held by the recurrence gate (``anomalous`` without one).
    """

    expected: FloatArray
    lower: FloatArray
    upper: FloatArray
    anomalous: BoolArray
    released: BoolArray


def score_series(times: Sequence[float] | FloatArray, values: Sequence[float] | FloatArray,
                 baseline: Baseline, direction: Direction = "both",
                 gate: RecurrenceGate | None = None,
                 novelty: NoveltyScorer | None = None) -> ScoredSeries:
    """Score each point against the history before it, then learn it (streaming, causal).

    ``gate`` (fed in order, after scoring) marks which anomalous points are ``released``.
    ``novelty`` (``baseline.novelty``) also marks a point anomalous when it flags it on
    the watched side, as ``SeriesBands`` does in rules.
    """
    n = len(values)
    expected, lower, upper = (np.full(n, np.nan) for _ in range(3))
    novel = np.zeros(n, dtype=bool)
    for i, (t, v) in enumerate(zip(times, values, strict=True)):
        band = baseline.predict(float(t))
        if band is not None:
            expected[i], lower[i], upper[i] = band.expected, band.lower, band.upper
        baseline.learn(float(t), float(v))
        if novelty is not None:
            excess = 0.0 if band is None else band_excess(band, float(v))
            novel[i] = novelty.step(float(v), excess) and on_side(band, float(v), direction)
    vals = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        above, below = vals > upper, vals < lower
    anomalous = above if direction == "above" else below if direction == "below" else above | below
    anomalous |= novel
    released = anomalous.copy()
    if gate is not None:
        for i, (t, v) in enumerate(zip(times, vals, strict=True)):
            released[i] = gate.step(float(t), float(v), float(expected[i]), bool(anomalous[i]))
    return ScoredSeries(expected, lower, upper, anomalous, released)


def runs(flags: BoolArray) -> list[tuple[int, int]]:
    """Maximal runs of True as inclusive ``(start, end)`` index pairs."""
    padded = np.concatenate(([False], flags.astype(bool), [False]))
    edges = np.flatnonzero(padded[1:] != padded[:-1])
    return [(int(s), int(e) - 1) for s, e in zip(edges[::2], edges[1::2], strict=True)]


def alert_windows(flags: BoolArray, values: FloatArray, expected: FloatArray | None = None, *,
                  debounce: int = 1, merge_gap: int = 0,
                  released: BoolArray | None = None) -> list[AlertWindow]:
    """Turn per-sample flags into alerts (see the module docstring for the rule).

    ``peak`` is the value farthest from ``expected`` (from the alert's median
    when no expectation is given). With ``released`` (a recurrence gate's
    marks), each window starts at its first released sample; a window with
    none is no alert.

    >>> f = np.array([1, 1, 0, 1, 0, 0, 0, 1, 1, 1], dtype=bool)
    >>> [(w.start, w.end) for w in alert_windows(f, np.arange(10.0), debounce=2, merge_gap=1)]
    [(0, 3), (7, 9)]
    """
    merged: list[tuple[int, int]] = []
    for start, end in runs(flags):
        if merged and start - merged[-1][1] - 1 <= merge_gap:
            merged[-1] = (merged[-1][0], end)
        elif end - start + 1 >= debounce:
            merged.append((start, end))
    if released is not None:
        held = merged
        merged = []
        for s, e in held:
            marks = np.flatnonzero(released[s : e + 1] & flags[s : e + 1])
            if marks.size:
                merged.append((s + int(marks[0]), e))
    return [AlertWindow(s, e, _peak(values, expected, flags, s, e)) for s, e in merged]


def _peak(values: FloatArray, expected: FloatArray | None, flags: BoolArray, s: int, e: int) -> float:
    idx = np.flatnonzero(flags[s : e + 1]) + s
    vals = values[idx]
    centre = expected[idx] if expected is not None else np.full(idx.size, np.median(vals))
    dev = np.abs(vals - np.where(np.isnan(centre), np.median(vals), centre))
    return float(vals[int(np.argmax(dev))])
