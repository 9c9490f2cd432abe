"""The anomaly likelihood of recent raw scores, and the novelty scorer that combines through it.

As HTM's anomaly likelihood: the raw score (novelty of the pattern, and how far the
value left its band) is averaged over the last ``short`` points; that average is
judged against the mean and variance of its own recent history (exponentially
weighted over about ``long`` points: O(1) time and memory), and the Gaussian tail
probability of the current average decides. An average above the ``likelihood``
quantile (0.9999: a tail probability of 1e-4) flags the point and the ``hold - 1``
after it (so an alert rule's debounce sees a run). The scale of the raw score does not
matter, only how unusual it is *for this series*, so one setting serves every series.

Warm-up is counted in points, whatever the cadence: nothing is flagged before
``min_points`` points (a few hundred), by which the average's history is known.
"""

from __future__ import annotations

import math
from collections import deque
from statistics import NormalDist
from typing import Any

from inferwatch.baseline._novelty import FuzzyArt
from inferwatch.baseline._settings import NoveltySettings

__all__ = ["AnomalyLikelihood", "NoveltyScorer"]

_MIN_SD = 1e-3  # raw scores are in [0, 1]: a series whose score never moves still has a scale


class AnomalyLikelihood:
    """Whether the recent raw scores are unusually high for this series (module docstring).

    >>> lik = AnomalyLikelihood(short=3, long=200, likelihood=0.999, min_points=50)
    >>> flags = [lik.step(0.05 + 0.01 * (i % 3)) for i in range(300)]
    >>> any(flags), any(lik.step(0.9) for _ in range(3))
    (False, True)
    """

    __slots__ = ("_recent", "alpha", "mean", "min_points", "seen", "short", "var", "z")

    def __init__(self, short: int = 10, long: int = 2016, likelihood: float = 0.9999,
                 min_points: int = 288) -> None:
        if short < 1 or long < 2 or not 0.5 < likelihood < 1 or min_points < 0:
            raise ValueError("anomaly likelihood needs short >= 1, long >= 2, "
                             "0.5 < likelihood < 1 and min_points >= 0")
        self.short, self.min_points = short, min_points
        self.alpha = 2.0 / (long + 1)
        self.z = NormalDist().inv_cdf(likelihood)
        self._recent: deque[float] = deque(maxlen=short)
        self.mean = self.var = 0.0
        self.seen = 0

    def tail(self, average: float) -> float:
        """The Gaussian tail probability of ``average`` under the history so far."""
        sd = max(math.sqrt(self.var), _MIN_SD)
        return 0.5 * math.erfc((average - self.mean) / sd / math.sqrt(2.0))

    def step(self, raw: float) -> bool:
        """Add one raw score; whether the recent average is beyond the likelihood threshold."""
        self._recent.append(raw)
        average = sum(self._recent) / len(self._recent)
        sd = max(math.sqrt(self.var), _MIN_SD)
        flagged = self.seen >= self.min_points and (average - self.mean) / sd > self.z
        if self.seen == 0:
            self.mean = average
        else:  # exponentially weighted mean and variance (West's incremental form)
            diff = average - self.mean
            incr = self.alpha * diff
            self.mean += incr
            self.var = (1.0 - self.alpha) * (self.var + diff * incr)
        self.seen += 1
        return flagged

    def to_state(self) -> dict[str, Any]:
        """JSON-ready state (the settings come from the config on restore)."""
        return {"recent": list(self._recent), "mean": self.mean, "var": self.var, "seen": self.seen}

    def restore(self, state: dict[str, Any]) -> None:
        """Continue from :meth:`to_state`'s output."""
        self._recent.extend(float(x) for x in state["recent"][-self.short:])
        self.mean, self.var, self.seen = float(state["mean"]), float(state["var"]), int(state["seen"])


class NoveltyScorer:
    """One series' novelty detector and likelihood: ``step`` says whether a point is anomalous.

    The raw score is the pattern's novelty (:class:`FuzzyArt`), or how far the value
    left its band when ``use_band`` and that is higher (1 at ``2x`` the band's half-width).
    """

    __slots__ = ("_left", "art", "config", "likelihood")

    def __init__(self, config: NoveltySettings) -> None:
        self.config = config
        self.art = FuzzyArt(config.window, config.levels, config.rho, config.categories)
        self.likelihood = AnomalyLikelihood(config.short, config.long, config.likelihood,
                                            config.min_points)
        self._left = 0  # points still flagged by the hold

    @property
    def learned(self) -> bool:
        """Whether the warm-up (``min_points`` points) is over."""
        return self.likelihood.seen >= self.config.min_points

    def step(self, value: float, band_excess: float = 0.0) -> bool:
        """Score ``value`` (``band_excess``: |value - expected| / half-width, 0 without a band)."""
        if not math.isfinite(value):
            return False
        raw = self.art.step(value)
        if self.config.use_band and math.isfinite(band_excess):
            raw = max(raw, min(max(band_excess - 1.0, 0.0), 1.0))
        if self.likelihood.step(raw):
            self._left = self.config.hold
        if self._left > 0:
            self._left -= 1
            return True
        return False

    def state_bytes(self) -> int:
        """Bytes of numeric state held."""
        return self.art.state_bytes() + 8 * (self.config.short + 4)

    def to_state(self) -> dict[str, Any]:
        """JSON-ready state; :meth:`from_state` continues where this left."""
        return {"art": self.art.to_state(), "likelihood": self.likelihood.to_state(),
                "left": self._left}

    @classmethod
    def from_state(cls, state: dict[str, Any], config: NoveltySettings) -> NoveltyScorer:
        """Rebuild from :meth:`to_state`; ``ValueError`` when malformed or of another shape."""
        s = cls(config)
        try:
            art = FuzzyArt.from_state(state["art"])
            if (art.window, art.levels, art.categories) != (config.window, config.levels,
                                                            config.categories):
                raise ValueError("novelty state of another shape")
            art.rho = config.rho
            s.art = art
            s.likelihood.restore(state["likelihood"])
            s._left = int(state["left"])
        except (KeyError, TypeError, IndexError) as exc:
            raise ValueError(f"not a novelty state: {exc!r}") from exc
        return s
