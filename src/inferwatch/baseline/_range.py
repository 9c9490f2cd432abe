"""The long-memory range: a series' low and high over weeks, the recent hours left out.

The seasonal band follows the series: its level re-learns a shift within hours
and its scale widens with whatever the last week did. A slow drift (a bearing
warming over days, a disk filling) is learned away before it leaves the band.
The range remembers the lowest and highest value of each hour over a long
horizon (4 weeks) and leaves out the last hours (12), so that a value well
beyond every value of the past weeks, a new low or high by a margin of that
range, is anomalous whatever the short memory has learned.

Memory is one (slot number, low, high) per slot of the horizon, bounded by the
config; the low and high over the kept slots are recomputed once per slot, so a
point costs O(1) amortised.
"""

from __future__ import annotations

import math
from typing import Any

from inferwatch.baseline._ring import Ring

__all__ = ["LongRange"]


class LongRange:
    """Low and high over the slots between ``horizon`` and ``exclude`` before a time.

    >>> r = LongRange(slot=3600.0, horizon=86400.0, exclude=7200.0, min_history=0.0)
    >>> for h in range(10): r.learn(h * 3600.0, float(h))
    >>> r.bounds(10 * 3600.0)  # hours 8 and 9 are left out
    (0.0, 7.0)
    """

    __slots__ = ("_cache", "_cache_key", "_cur", "_cur_high", "_cur_low", "_exclude", "_first_t",
                 "_highs", "_horizon", "_lows", "_slot", "_slots", "min_history")

    def __init__(self, *, slot: float, horizon: float, exclude: float, min_history: float) -> None:
        if slot <= 0 or horizon <= exclude:
            raise ValueError(f"range horizon {horizon:g}s must exceed its exclusion {exclude:g}s")
        self._slot = slot
        self._horizon = max(1, round(horizon / slot))  # in slots
        self._exclude = max(0, round(exclude / slot))
        self.min_history = min_history  # a threshold: may change under a learned range
        self._slots = Ring(self._horizon)  # absolute slot numbers, one per finished slot
        self._lows = Ring(self._horizon)
        self._highs = Ring(self._horizon)
        self._cur: int | None = None  # the slot being filled
        self._cur_low = self._cur_high = math.nan
        self._first_t = math.nan
        self._cache_key: int | None = None
        self._cache: tuple[float, float] | None = None

    def learn(self, t: float, value: float) -> None:
        """Add one finite point (times in order, as the baseline feeds them)."""
        if math.isnan(self._first_t):
            self._first_t = t
        k = math.floor(t / self._slot)
        if k != self._cur:
            if self._cur is not None:
                self._slots.push(float(self._cur))
                self._lows.push(self._cur_low)
                self._highs.push(self._cur_high)
            self._cur, self._cur_low, self._cur_high = k, value, value
        else:
            self._cur_low = min(self._cur_low, value)
            self._cur_high = max(self._cur_high, value)

    def bounds(self, t: float) -> tuple[float, float] | None:
        """``(low, high)`` over the slots in ``[t - horizon, t - exclude)``, or ``None``.

        ``None`` before ``min_history`` of data or when no slot lies in that span.
        """
        if math.isnan(self._first_t) or t - self._first_t < self.min_history:
            return None
        key = math.floor(t / self._slot)
        if key != self._cache_key:
            self._cache_key = key
            self._cache = self._compute(key)
        return self._cache

    def _compute(self, key: int) -> tuple[float, float] | None:
        oldest, newest = key - self._horizon, key - self._exclude - 1
        lows, highs = [], []
        if len(self._slots):
            slots = self._slots.values()
            keep = (slots >= oldest) & (slots <= newest)
            if keep.any():
                lows.append(float(self._lows.values()[keep].min()))
                highs.append(float(self._highs.values()[keep].max()))
        if self._cur is not None and oldest <= self._cur <= newest:  # after a gap, unflushed
            lows.append(self._cur_low)
            highs.append(self._cur_high)
        return (min(lows), max(highs)) if lows else None

    def size(self) -> int:
        """Floats held: three per finished slot, bounded by the horizon."""
        return 3 * len(self._slots)

    def to_state(self) -> dict[str, Any]:
        """JSON-ready state; ``LongRange.from_state`` continues exactly where this left."""
        return {
            "slot": self._slot, "horizon": self._horizon, "exclude": self._exclude,
            "min_history": self.min_history,
            "slots": self._slots.to_state(), "lows": self._lows.to_state(),
            "highs": self._highs.to_state(), "cur": self._cur,
            "cur_low": None if math.isnan(self._cur_low) else self._cur_low,
            "cur_high": None if math.isnan(self._cur_high) else self._cur_high,
            "first_t": None if math.isnan(self._first_t) else self._first_t,
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> LongRange:
        """Rebuild a range saved by ``to_state``."""
        slot = float(state["slot"])
        horizon, exclude = int(state["horizon"]), int(state["exclude"])
        r = cls(slot=slot, horizon=horizon * slot, exclude=exclude * slot,
                min_history=float(state["min_history"]))
        r._slots = Ring.from_state(state["slots"])
        r._lows = Ring.from_state(state["lows"])
        r._highs = Ring.from_state(state["highs"])
        if not len(r._slots) == len(r._lows) == len(r._highs):
            raise ValueError("range state has rings of different lengths")
        r._cur = None if state["cur"] is None else int(state["cur"])
        r._cur_low = math.nan if state["cur_low"] is None else float(state["cur_low"])
        r._cur_high = math.nan if state["cur_high"] is None else float(state["cur_high"])
        r._first_t = math.nan if state["first_t"] is None else float(state["first_t"])
        return r
