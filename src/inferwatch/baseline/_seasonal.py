"""The default baseline: robust level + seasonal medians, MAD band, model chosen by fit.

Three candidate models run side by side on every series:

* ``flat``   expected = median of the last ``level_points`` values;
* ``daily``  expected = daily-slot median + median of recent deseasonalised values;
* ``weekly`` the same with day-of-week slots (ready after two weeks).

Each keeps its recent residuals; the band comes from the candidate with the
smallest robust scale (1.4826·MAD), so a series without seasonality uses the
flat model and a short series (weekly never learned) falls back gracefully.
Medians make every part resistant to the spikes it should find; the short
median level re-learns a level shift within ``level_points / 2`` samples.

With ``windows`` set (the default since 2026-12-03: 6 and 24), each candidate
also tracks the mean of its last N residuals for each N, with a robust band of its
own (``window_band`` deviations or ``window_tail_factor`` times the tail quantile
of past window means). A
sustained shift too small for the point band still moves the window mean out
of its band. The returned band folds that test in: a value is outside it
exactly when the point or any window mean would leave its band, so callers
that only compare a value with a band need nothing new. A window band is never
narrower than the point band's ``relative_floor``.

The long-memory range (``range_horizon``, 4 weeks) narrows the band the same
way: a value beyond the lowest or highest of the past weeks (the last
``range_exclude`` left out) by ``range_margin`` of that range is anomalous,
so a slow drift that the level and scale learn away still alerts.
"""

from __future__ import annotations

import math
from typing import Any

from inferwatch.baseline._band import Band
from inferwatch.baseline._profile import SeasonalProfile
from inferwatch.baseline._range import LongRange
from inferwatch.baseline._ring import Ring, robust_sigma_and_tail
from inferwatch.baseline._settings import SeasonalSettings

__all__ = ["SeasonalBaseline"]

DAY, WEEK = 86400.0, 7 * 86400.0
_CANDIDATES = ("flat", "daily", "weekly")
# settings that shape the kept state (ring sizes, slots, windows); the others are read
# at every predict or refresh and can change under a learned baseline
_STRUCTURE = ("slot", "days", "weeks", "slot_capacity", "level_points", "scale_points", "windows",
              "range_horizon", "range_exclude", "range_slot")


class _Window:
    """The means of the last ``n`` residuals and their robust band half-width."""

    __slots__ = ("half", "means", "n")

    def __init__(self, n: int, cfg: SeasonalSettings) -> None:
        self.n = n
        self.means = Ring(cfg.scale_points)
        self.half = math.nan

    def refresh(self, cfg: SeasonalSettings) -> None:
        # the ring keeps scale_points means: a smaller scale_points lowers the warm-up to that
        if len(self.means) < min(cfg.window_min_points, cfg.scale_points):
            return
        sigma, tail = robust_sigma_and_tail(self.means.values(), cfg.tail_quantile)
        self.half = max(cfg.window_band * sigma, cfg.window_tail_factor * tail)

    def to_state(self) -> dict[str, Any]:
        return {"n": self.n, "means": self.means.to_state(),
                "half": None if math.isnan(self.half) else self.half}

    def restore(self, state: dict[str, Any]) -> None:
        self.means = Ring.from_state(state["means"])
        self.half = math.nan if state["half"] is None else float(state["half"])


class _Candidate:
    """One model's recent deseasonalised values and residuals."""

    __slots__ = ("level", "recent", "resid", "sigma", "since_refresh", "tail", "windows")

    def __init__(self, cfg: SeasonalSettings) -> None:
        self.level = Ring(cfg.level_points, ordered=True)
        self.resid = Ring(cfg.scale_points)
        self.sigma = math.nan
        self.tail = math.nan
        self.since_refresh = 0
        self.windows = [_Window(n, cfg) for n in cfg.windows]
        # the last residuals, raw (unclipped), for the window means: packed, not float objects
        self.recent = Ring(max(cfg.windows, default=1))

    def refresh(self, cfg: SeasonalSettings) -> None:
        self.sigma, tail = robust_sigma_and_tail(self.resid.values(),
                                                 cfg.tail_quantile if cfg.tail_factor else None)
        self.tail = tail if cfg.tail_factor else 0.0
        for w in self.windows:
            w.refresh(cfg)
        self.since_refresh = 0

    def push_residual(self, resid: float) -> None:
        """Feed the window means with one raw residual (push order kept)."""
        self.recent.push(resid)
        newest = self.recent.newest(self.recent.capacity)
        for w in self.windows:
            if len(newest) >= w.n:
                w.means.push(sum(newest[: w.n]) / w.n)

    def window_bounds(self, cfg: SeasonalSettings, lower: float, upper: float,
                      expected: float) -> tuple[float, float]:
        """Narrow ``(lower, upper)`` to the values that keep every window mean in its band.

        The mean of the last ``n`` residuals including this one, ``(S + r) / n``,
        leaves ``±half`` exactly when ``r`` leaves ``[-n·half - S, n·half - S]``,
        where ``S`` sums the previous ``n - 1`` residuals. ``half`` is at least the
        point band's relative floor, so a flat series (every window mean 0) keeps a band.
        """
        floor = max(cfg.relative_floor * abs(expected), 1e-12)
        newest: list[float] | None = None
        for w in self.windows:
            if math.isnan(w.half) or len(self.recent) < w.n - 1:
                continue
            if newest is None:
                newest = self.recent.newest(self.recent.capacity)
            prior = sum(newest[: w.n - 1])
            half = max(w.half, floor)
            lower = max(lower, expected - w.n * half - prior)
            upper = min(upper, expected + w.n * half - prior)
        return lower, upper

    def half_width(self, cfg: SeasonalSettings, expected: float) -> float:
        return max(cfg.band * self.sigma, cfg.tail_factor * self.tail,
                   cfg.relative_floor * abs(expected), 1e-12)

    def to_state(self) -> dict[str, Any]:
        return {"level": self.level.to_state(), "resid": self.resid.to_state(),
                "sigma": None if math.isnan(self.sigma) else self.sigma,
                "tail": None if math.isnan(self.tail) else self.tail,
                "since_refresh": self.since_refresh,
                "recent": self.recent.kept().tolist(), "windows": [w.to_state() for w in self.windows]}

    def restore(self, state: dict[str, Any]) -> None:
        self.level = Ring.from_state(state["level"], ordered=True)
        self.resid = Ring.from_state(state["resid"])
        self.sigma = math.nan if state["sigma"] is None else float(state["sigma"])
        self.tail = math.nan if state["tail"] is None else float(state["tail"])
        self.since_refresh = int(state["since_refresh"])
        # states saved before window means existed have neither key
        for r in list(state.get("recent", []))[-self.recent.capacity :]:
            self.recent.push(float(r))
        saved = {int(w["n"]): w for w in state.get("windows", [])}
        for w in self.windows:
            if w.n in saved:
                w.restore(saved[w.n])


def _long_range(cfg: SeasonalSettings) -> LongRange | None:
    if not cfg.range_horizon:
        return None
    return LongRange(slot=cfg.range_slot, horizon=cfg.range_horizon, exclude=cfg.range_exclude,
                     min_history=cfg.range_min_history)


class SeasonalBaseline:
    """Robust seasonal baseline for one series; O(1) amortised per point, bounded state.

    >>> b = SeasonalBaseline(SeasonalSettings(min_history=0, min_points=4, scale_points=16))
    >>> for i in range(20): b.learn(i * 300.0, 10.0 + (i % 2))
    >>> band = b.predict(20 * 300.0); band.lower < 10.5 < band.upper
    True
    """

    def __init__(self, config: SeasonalSettings | None = None) -> None:
        self.config = cfg = config or SeasonalSettings()
        self._profiles = {
            "daily": SeasonalProfile(DAY, cfg.slot, cfg.days, cfg.slot_capacity, min_cycles=1),
            "weekly": SeasonalProfile(WEEK, cfg.slot, cfg.weeks, cfg.slot_capacity, min_cycles=2),
        }
        self._candidates = {name: _Candidate(cfg) for name in _CANDIDATES}
        self._range = _long_range(cfg)
        self._first_t = math.nan
        self._last_t = -math.inf
        self._points = 0
        self.model = ""  # the candidate behind the last band ("" before the first)

    def _reference(self, name: str, t: float) -> float | None:
        return 0.0 if name == "flat" else self._profiles[name].reference(t)

    def _expected(self, name: str, t: float) -> float | None:
        ref = self._reference(name, t)
        cand = self._candidates[name]
        if ref is None or not len(cand.level):
            return None
        return ref + cand.level.median()

    @property
    def learned(self) -> bool:
        """Whether ``min_history`` and ``min_points`` have been seen and a scale is known."""
        cfg = self.config
        return (self._points >= cfg.min_points and self._last_t - self._first_t >= cfg.min_history
                and any(len(c.resid) >= cfg.min_points and not math.isnan(c.sigma)
                        for c in self._candidates.values()))

    def warmup(self) -> dict[str, float]:
        """How far the warm-up is: samples and seconds seen against those needed for a band."""
        cfg = self.config
        seen = 0.0 if math.isnan(self._first_t) else self._last_t - self._first_t
        return {"points": self._points, "min_points": cfg.min_points,
                "history_s": seen, "min_history_s": cfg.min_history}

    def predict(self, t: float) -> Band | None:
        """The band at ``t``, or ``None`` before ``min_history`` and ``min_points``."""
        cfg = self.config
        if self._points < cfg.min_points or t - self._first_t < cfg.min_history:
            return None
        best: tuple[float, float, str] | None = None
        for name in _CANDIDATES:
            cand = self._candidates[name]
            if len(cand.resid) < cfg.min_points or math.isnan(cand.sigma):
                continue
            expected = self._expected(name, t)
            if expected is not None and (best is None or cand.sigma < best[0]):
                best = (cand.sigma, expected, name)
        if best is None:
            return None
        _, expected, self.model = best
        cand = self._candidates[self.model]
        half = cand.half_width(cfg, expected)
        lower, upper = cand.window_bounds(cfg, expected - half, expected + half, expected)
        if self._range is not None and (r := self._range.bounds(t)) is not None:
            low, high = r
            pad = max(cfg.range_margin * (high - low), cfg.relative_floor * max(abs(low), abs(high)))
            lower, upper = max(lower, low - pad), min(upper, high + pad)
        return Band(expected, lower, upper)

    def learn(self, t: float, value: float) -> None:
        """Add ``(t, value)``; NaN, infinities and times before the last one are skipped."""
        if not math.isfinite(value) or not math.isfinite(t) or t < self._last_t:
            return
        for name in _CANDIDATES:
            self._learn_candidate(name, t, value)
        for profile in self._profiles.values():
            profile.learn(t, value)
        if self._range is not None:
            self._range.learn(t, value)
        if math.isnan(self._first_t):
            self._first_t = t
        self._last_t = t
        self._points += 1

    def _learn_candidate(self, name: str, t: float, value: float) -> None:
        cand = self._candidates[name]
        ref = self._reference(name, t)
        if ref is None:
            return
        expected = self._expected(name, t)
        if expected is not None:
            resid = value - expected
            if cand.windows:
                cand.push_residual(resid)
            if self.config.clip_residuals and not math.isnan(cand.sigma):
                # anomalies must not widen the band that should catch the next one
                half = cand.half_width(self.config, expected)
                resid = min(max(resid, -half), half)
            cand.resid.push(resid)
            cand.since_refresh += 1
            if math.isnan(cand.sigma) or cand.since_refresh >= self.config.refresh_points:
                cand.refresh(self.config)
        cand.level.push(value - ref)

    def adopt(self, config: SeasonalSettings) -> bool:
        """Take ``config``'s thresholds (band, tail, floors, warm-up) and keep what was learned.

        False, changing nothing, when ``config`` differs in a setting that shapes the
        state (ring sizes, slots, windows, the range's span): then the series must be
        learned afresh under the new settings.
        """
        if any(getattr(config, k) != getattr(self.config, k) for k in _STRUCTURE):
            return False
        self.config = config
        if self._range is not None:
            self._range.min_history = config.range_min_history
        return True

    def state_size(self) -> int:
        """Floats held in memory: bounded by the config, independent of history length."""
        rings = sum(p.filled() for p in self._profiles.values())
        rings += self._range.size() if self._range is not None else 0
        return rings + sum(len(c.level) + len(c.resid) + len(c.recent)
                           + sum(len(w.means) for w in c.windows)
                           for c in self._candidates.values())

    def to_state(self) -> dict[str, Any]:
        """JSON-ready state; ``SeasonalBaseline.from_state`` continues exactly where this left."""
        return {
            "method": "seasonal",
            "config": self.config.to_dict(),
            "first_t": None if math.isnan(self._first_t) else self._first_t,
            "last_t": None if math.isinf(self._last_t) else self._last_t,
            "points": self._points,
            "model": self.model,
            "profiles": {k: p.to_state() for k, p in self._profiles.items()},
            "candidates": {k: c.to_state() for k, c in self._candidates.items()},
            "range": None if self._range is None else self._range.to_state(),
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> SeasonalBaseline:
        """Rebuild a baseline saved by ``to_state`` (``ValueError`` on a malformed state)."""
        try:
            b = cls(SeasonalSettings.from_dict(state["config"]))
            b._first_t = math.nan if state["first_t"] is None else float(state["first_t"])
            b._last_t = -math.inf if state["last_t"] is None else float(state["last_t"])
            b._points = int(state["points"])
            b.model = str(state["model"])
            b._profiles = {k: SeasonalProfile.from_state(state["profiles"][k]) for k in b._profiles}
            for name, cand in b._candidates.items():
                cand.restore(state["candidates"][name])
            # states saved before the range existed have no key: it starts learning now
            if b._range is not None and state.get("range") is not None:
                b._range = LongRange.from_state(state["range"])
        except (KeyError, TypeError, IndexError) as exc:
            raise ValueError(f"not a seasonal baseline state: {exc!r}") from exc
        return b
