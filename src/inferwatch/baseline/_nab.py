"""NAB's scoring of detections (the Numenta Anomaly Benchmark's published rules).

A file's first ``min(floor(0.15·n), 750)`` rows are probationary and not scored. A
detection inside a labelled window scores the scaled sigmoid ``2/(1+e^(5x)) − 1`` of
its position ``x = −(right − i + 1)/width``, divided by its value at ``x = −1``; only
the best detection of a window counts, and a window without one costs ``fn``. A
detection outside every window scores ``fp`` times the same sigmoid (negative there)
of its distance past the previous window's right edge over that window's width − 1,
or ``−fp`` before the first window. The normalised score of a set of files is
``100·(raw − null)/(perfect − null)``, ``null = −fn·windows``, ``perfect = tp·windows``.

Scoring a file precomputes every row's score once (:class:`NabFile`); any set of
detections is then scored by indexing (vectorised, so a sweep over settings is cheap).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = ["PROFILES", "NabFile", "NabProfile", "NabTally", "probationary_length", "row_of",
           "scaled_sigmoid"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]


@dataclass(frozen=True, slots=True)
class NabProfile:
    """The weights of a true positive, a false negative and a false positive."""

    name: str
    tp: float
    fn: float
    fp: float


PROFILES = (NabProfile("standard", 1.0, 1.0, 0.11), NabProfile("reward_low_FP_rate", 1.0, 1.0, 0.22))


def scaled_sigmoid(x: FloatArray | float) -> FloatArray:
    """``2/(1+e^(5x)) − 1`` (``−1`` beyond ``x = 3``, as NAB's scorer).

    >>> [round(float(v), 5) for v in scaled_sigmoid(np.array([-1.0, -0.5, 0.0, 1.0, 4.0]))]
    [0.98661, 0.84828, 0.0, -0.98661, -1.0]
    """
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore"):
        return np.where(x > 3.0, -1.0, 2.0 / (1.0 + np.exp(5.0 * np.minimum(x, 3.0))) - 1.0)


def probationary_length(n: int, fraction: float = 0.15) -> int:
    """Rows at the start of a file that are not scored: ``min(floor(fraction·n), fraction·5000)``."""
    return int(min(math.floor(fraction * n), fraction * 5000))


@dataclass
class NabTally:
    """Raw score parts over files: window count, sum of best window scores, false positives."""

    windows: int = 0
    tp_sum: float = 0.0  # best in-window scores (weight 1 each, before the tp weight)
    detected: int = 0
    fp_sum: float = 0.0  # sum of the (negative) false-positive sigmoids, before the fp weight
    fp: int = 0
    alerts: int = 0  # detections scored (after the probationary period), in windows or not

    def add(self, other: NabTally) -> None:
        """Accumulate ``other`` (another file, or another folder)."""
        self.windows += other.windows
        self.tp_sum += other.tp_sum
        self.detected += other.detected
        self.fp_sum += other.fp_sum
        self.fp += other.fp
        self.alerts += other.alerts

    def raw(self, p: NabProfile) -> float:
        """The raw NAB score under profile ``p``."""
        missed = self.windows - self.detected
        return p.tp * self.tp_sum - p.fn * missed + p.fp * self.fp_sum

    def normalised(self, p: NabProfile) -> float:
        """``100·(raw − null)/(perfect − null)``; 100 for files without windows and no detection."""
        null, perfect = -p.fn * self.windows, p.tp * self.windows
        if perfect == null:
            return 100.0 if self.fp == 0 else -math.inf
        return 100.0 * (self.raw(p) - null) / (perfect - null)


def row_of(times: FloatArray, t: float) -> int:
    """The first row stamped ``t`` (as NAB's ``timestamps.index``), else the first row after it."""
    exact = np.flatnonzero(times == t)
    return int(exact[0]) if exact.size else int(np.searchsorted(times, t, "left"))


class NabFile:
    """One file's rows and windows, every row's score precomputed (see the module docstring).

    >>> f = NabFile(20, [(10, 13)])
    >>> t = f.score([11]); t.detected, round(t.tp_sum, 3)
    (1, 0.967)
    """

    def __init__(self, n: int, windows: Sequence[tuple[int, int]]) -> None:
        self.n = n
        self.windows = list(windows)
        self.probation = probationary_length(n)
        self.window_of = np.full(n, -1, dtype=np.intp)
        self.tp_score = np.zeros(n)
        self.fp_score = np.full(n, -1.0)
        i = np.arange(n, dtype=np.float64)
        max_tp = float(scaled_sigmoid(-1.0))
        prev: tuple[int, int] | None = None
        for w, (lo, hi) in enumerate(self.windows):
            width = hi - lo + 1
            self.window_of[lo : hi + 1] = w
            self.tp_score[lo : hi + 1] = scaled_sigmoid(-(hi - i[lo : hi + 1] + 1) / width) / max_tp
            if prev is not None:
                self._fp_after(prev, prev[1] + 1, lo)
            prev = (lo, hi)
        if prev is not None:
            self._fp_after(prev, prev[1] + 1, n)
        # windows entirely in the probationary period are not scored (as NAB's scorer)
        self.scored = [hi >= self.probation for _, hi in self.windows]

    def _fp_after(self, window: tuple[int, int], start: int, stop: int) -> None:
        lo, hi = window
        span = np.arange(start, stop, dtype=np.float64)
        self.fp_score[start:stop] = scaled_sigmoid(np.abs(hi - span) / max(hi - lo, 1))

    @classmethod
    def from_times(cls, times: FloatArray, windows: Iterable[tuple[float, float]]) -> NabFile:
        """Windows given as times (epoch seconds), mapped to the rows they span."""
        return cls(len(times), [(row_of(times, lo), row_of(times, hi)) for lo, hi in windows])

    def score(self, detections: Iterable[int] | IntArray) -> NabTally:
        """Score detection row indices (alert onsets, or every flagged row as NAB's detectors)."""
        d = np.unique(np.asarray(list(detections) if not isinstance(detections, np.ndarray)
                                 else detections, dtype=np.intp))
        d = d[(d >= self.probation) & (d < self.n)]
        win = self.window_of[d]
        out = NabTally(windows=sum(self.scored), fp=int((win < 0).sum()), alerts=int(d.size),
                       fp_sum=float(self.fp_score[d[win < 0]].sum()))
        inside = d[win >= 0]
        for w in np.unique(self.window_of[inside]):
            if self.scored[w]:
                out.detected += 1
                out.tp_sum += float(self.tp_score[inside[self.window_of[inside] == w]].max())
        return out
