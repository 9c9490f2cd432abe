"""A pattern novelty detector: a compact Fuzzy ART over short windows of the series.

Written from the published description of adaptive resonance theory detectors
(ARTime's idea: judge a *pattern* new, not only a point far from its expectation);
no code is copied. Each point's input is the last ``window`` values, normalised by
the range seen so far and quantised to ``levels`` steps, with their one-level Haar
coefficients (pair means and half differences), complement coded.

* The range is estimated online, as a streaming detector cannot know a series'
  minimum and maximum in advance: the lowest and highest values seen, widened by
  each new extreme *after* it is scored, so a value beyond every earlier one enters
  clipped to 0 or 1 (an extreme pattern, which the categories have rarely seen).
* A category *resonates* when its match ``|min(w, I)| / |I|`` reaches the vigilance
  ``rho``; the best-chosen resonating one learns the input (``w <- min(w, I)``, fast
  learning). Without one, a new category is made (or the least used one replaced:
  at most ``categories``, so O(categories) per point and bounded memory).
* The raw novelty score is ``1 - best match``: 0 for a known pattern, higher the less
  the series has seen it. :class:`~inferwatch.baseline._likelihood.AnomalyLikelihood`
  turns the scores into a decision.
"""

from __future__ import annotations

import base64
import math
from collections import deque
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["FuzzyArt"]

_ALPHA = 1e-3  # the choice function's tie breaker toward smaller (more specific) categories


def _pack(a: npt.NDArray[Any]) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode()


def _unpack(s: str) -> npt.NDArray[np.float32]:
    return np.frombuffer(base64.b64decode(s, validate=True), dtype="<f4").astype(np.float32)


class FuzzyArt:
    """Fuzzy ART novelty scores for one series (see the module docstring).

    >>> art = FuzzyArt(window=4, levels=8, rho=0.9, categories=16)
    >>> scores = [art.step(float(i % 4)) for i in range(40)]
    >>> max(scores[20:]) == 0.0 and art.step(40.0) > 0.0  # a known cycle, then a new level
    True
    """

    __slots__ = ("_hi", "_lo", "_recent", "_uses", "_w", "categories", "levels", "n", "rho", "seen",
                 "window")

    def __init__(self, window: int = 8, levels: int = 10, rho: float = 0.9,
                 categories: int = 32) -> None:
        if window < 2 or window % 2 or levels < 2 or not 0 < rho < 1 or categories < 2:
            raise ValueError("fuzzy ART needs an even window >= 2, levels >= 2, 0 < rho < 1 "
                             "and categories >= 2")
        self.window, self.levels, self.rho, self.categories = window, levels, rho, categories
        self._w = np.zeros((categories, 4 * window), dtype=np.float32)  # values + Haar, complemented
        self._uses = np.zeros(categories, dtype=np.float32)
        self.n = 0  # categories in use
        self._recent: deque[float] = deque(maxlen=window)
        self._lo = self._hi = math.nan
        self.seen = 0  # finite points stepped

    def _input(self) -> npt.NDArray[np.float32]:
        span = self._hi - self._lo
        v = np.fromiter(self._recent, dtype=np.float64, count=self.window)
        u = np.full(self.window, 0.5) if span <= 0 else np.clip((v - self._lo) / span, 0.0, 1.0)
        u = np.round(u * self.levels) / self.levels
        pairs = u.reshape(-1, 2)
        haar = np.concatenate((pairs.mean(axis=1), (pairs[:, 0] - pairs[:, 1]) / 2 + 0.5))
        a = np.concatenate((u, haar))
        return np.concatenate((a, 1.0 - a)).astype(np.float32)

    def step(self, value: float) -> float:
        """Score ``value``'s pattern (0: known, up to 1: new), then learn it; NaN scores 0."""
        if not math.isfinite(value):
            return 0.0
        self._recent.append(value)
        self.seen += 1
        score = 0.0
        if len(self._recent) == self.window:
            score = self._resonate(self._input())
        if math.isnan(self._lo):
            self._lo = self._hi = value
        self._lo, self._hi = min(self._lo, value), max(self._hi, value)
        return score

    def _resonate(self, inp: npt.NDArray[np.float32]) -> float:
        norm = float(inp.sum())  # the same for every input: complement coding
        if self.n:
            w = self._w[: self.n]
            inter = np.minimum(w, inp)
            isum = inter.sum(axis=1)
            match = isum / norm
            ok = np.flatnonzero(match >= self.rho)
            best = float(match.max())
            if ok.size:
                choice = isum[ok] / (_ALPHA + w[ok].sum(axis=1))
                j = int(ok[int(np.argmax(choice))])
                self._w[j] = inter[j]
                self._uses[j] += 1
                return 1.0 - best
        else:
            best = 1.0  # the first pattern founds the first category: nothing to compare with
        j = self.n if self.n < self.categories else int(np.argmin(self._uses[: self.n]))
        self.n = max(self.n, j + 1)
        self._w[j], self._uses[j] = inp, 1.0
        # the uses decay as categories are replaced, so an old favourite can make way too
        if self.n == self.categories:
            self._uses *= 0.999
        return 1.0 - best

    def state_bytes(self) -> int:
        """Bytes of numeric state held (the category weights dominate)."""
        return int(self._w.nbytes + self._uses.nbytes + 8 * (self.window + 2))

    def to_state(self) -> dict[str, Any]:
        """JSON-ready state; :meth:`from_state` continues exactly where this left."""
        return {"window": self.window, "levels": self.levels, "rho": self.rho,
                "categories": self.categories, "n": self.n, "seen": self.seen,
                "w": _pack(self._w[: self.n]), "uses": _pack(self._uses[: self.n]),
                "recent": list(self._recent),
                "lo": None if math.isnan(self._lo) else self._lo,
                "hi": None if math.isnan(self._hi) else self._hi}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> FuzzyArt:
        """Rebuild a detector saved by :meth:`to_state` (``ValueError`` on a malformed state)."""
        try:
            art = cls(int(state["window"]), int(state["levels"]), float(state["rho"]),
                      int(state["categories"]))
            n = int(state["n"])
            w, uses = _unpack(state["w"]), _unpack(state["uses"])
            if not 0 <= n <= art.categories or w.size != n * 4 * art.window or uses.size != n:
                raise ValueError("fuzzy ART state out of range")
            art.n, art.seen = n, int(state["seen"])
            art._w[:n] = w.reshape(n, -1)
            art._uses[:n] = uses
            art._recent.extend(float(x) for x in state["recent"][-art.window:])
            art._lo = math.nan if state["lo"] is None else float(state["lo"])
            art._hi = math.nan if state["hi"] is None else float(state["hi"])
        except (KeyError, TypeError, IndexError) as exc:
            raise ValueError(f"not a fuzzy ART state: {exc!r}") from exc
        return art
