"""A seasonal profile: per time-of-day (or day-of-week) slot, the median of past cycles."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from inferwatch.baseline._ring import Ring

__all__ = ["SeasonalProfile"]


class SeasonalProfile:
    """Median of the values seen in the same slot of earlier cycles (days or weeks).

    Each slot keeps a fixed-size ring of ``(time, value)``, so memory is bounded
    by ``slots * capacity`` whatever the history length. A slot's reference is
    computed once when time enters it (from earlier cycles only), which makes
    ``reference`` O(1) amortised and blind to the current cycle's anomalies.
    """

    __slots__ = ("_cache_key", "_cache_value", "_cycles", "_first_t", "_min_cycles", "_period",
                 "_slot", "_times", "_values")

    def __init__(self, period: float, slot: float, cycles: int, capacity: int,
                 min_cycles: int = 1) -> None:
        n_slots = round(period / slot)
        if n_slots < 1 or not math.isclose(n_slots * slot, period):
            raise ValueError(f"slot {slot:g}s must divide the period {period:g}s")
        self._period, self._slot, self._cycles = period, slot, cycles
        self._min_cycles = min_cycles
        self._times = [Ring(capacity) for _ in range(n_slots)]
        self._values = [Ring(capacity) for _ in range(n_slots)]
        self._first_t = math.nan
        self._cache_key = -1
        self._cache_value = math.nan

    def _index(self, t: float) -> tuple[int, int]:
        absolute = math.floor(t / self._slot)
        return absolute, absolute % len(self._values)

    def reference(self, t: float) -> float | None:
        """The slot's median over earlier cycles, or ``None`` before ``min_cycles`` cycles."""
        if math.isnan(self._first_t) or t - self._first_t < self._min_cycles * self._period:
            return None
        absolute, index = self._index(t)
        if absolute != self._cache_key:
            self._cache_key = absolute
            self._cache_value = self._median(index, t)
        return None if math.isnan(self._cache_value) else self._cache_value

    def _median(self, index: int, t: float) -> float:
        times, values = self._times[index].values(), self._values[index].values()
        keep = times > t - self._cycles * self._period
        return float(np.median(values[keep])) if keep.any() else math.nan

    def learn(self, t: float, value: float) -> None:
        """Add one point to its slot, thinned so that each slot's ring spans ``cycles`` cycles."""
        if math.isnan(self._first_t):
            self._first_t = t
        _, index = self._index(t)
        times = self._times[index]
        # a fast series (15 s samples) would fill a slot's ring within one cycle
        spacing = self._slot / max(1, times.capacity // self._cycles)
        if len(times) and t - times.last() < spacing:
            return
        times.push(t)
        self._values[index].push(value)

    def to_state(self) -> dict[str, Any]:
        """JSON-ready state (the cached slot reference included, for identical replay)."""
        return {
            "period": self._period, "slot": self._slot, "cycles": self._cycles,
            "min_cycles": self._min_cycles, "capacity": self._values[0].capacity,
            "first_t": None if math.isnan(self._first_t) else self._first_t,
            "cache_key": self._cache_key,
            "cache_value": None if math.isnan(self._cache_value) else self._cache_value,
            "times": [r.to_state() for r in self._times],
            "values": [r.to_state() for r in self._values],
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> SeasonalProfile:
        """Rebuild a profile saved by ``to_state``."""
        p = cls(float(state["period"]), float(state["slot"]), int(state["cycles"]),
                int(state["capacity"]), int(state["min_cycles"]))
        if len(state["times"]) != len(p._times) or len(state["values"]) != len(p._values):
            raise ValueError("profile state has the wrong number of slots")
        p._times = [Ring.from_state(s) for s in state["times"]]
        p._values = [Ring.from_state(s) for s in state["values"]]
        p._first_t = math.nan if state["first_t"] is None else float(state["first_t"])
        p._cache_key = int(state["cache_key"])
        p._cache_value = math.nan if state["cache_value"] is None else float(state["cache_value"])
        return p
