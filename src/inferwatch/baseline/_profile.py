"""A seasonal profile: per time-of-day (or day-of-week) slot, the median of past cycles."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from inferwatch.baseline._ring import Ring, ring_state

__all__ = ["SeasonalProfile"]


class SeasonalProfile:
    """Median of the values seen in the same slot of earlier cycles (days or weeks).

    Each slot keeps a fixed-size ring of ``(time, value)``, so memory is bounded
    by ``slots * capacity`` whatever the history length. A slot's reference is
    computed once when time enters it (from earlier cycles only), which makes
    ``reference`` O(1) amortised and blind to the current cycle's anomalies.

    The rings are the rows of two ``slots x width`` arrays (times, values) with a
    head and a count per slot: two arrays a profile, not two a slot (a weekly
    profile has 336 slots, and each array costs ~100 bytes before its data). The
    width grows with the fullest slot up to ``capacity``, so a coarse or young
    series holds what it has seen, not the capacity.
    """

    __slots__ = ("_cache_key", "_cache_value", "_capacity", "_count", "_cycles", "_first_t",
                 "_head", "_min_cycles", "_period", "_slot", "_times", "_values")

    def __init__(self, period: float, slot: float, cycles: int, capacity: int,
                 min_cycles: int = 1) -> None:
        n_slots = round(period / slot)
        if n_slots < 1 or not math.isclose(n_slots * slot, period):
            raise ValueError(f"slot {slot:g}s must divide the period {period:g}s")
        if capacity < 1:
            raise ValueError(f"slot capacity must be positive, got {capacity}")
        self._period, self._slot, self._cycles = period, slot, cycles
        self._min_cycles = min_cycles
        self._capacity = capacity
        self._times: npt.NDArray[np.float64] = np.empty((n_slots, 0), dtype=np.float64)
        self._values: npt.NDArray[np.float64] = np.empty((n_slots, 0), dtype=np.float64)
        # plain lists: read and written every point, where a numpy scalar costs ~5x a list item
        self._head = [0] * n_slots  # next write position of each slot's ring
        self._count = [0] * n_slots
        self._first_t = math.nan
        self._cache_key = -1
        self._cache_value = math.nan

    def _index(self, t: float) -> tuple[int, int]:
        absolute = math.floor(t / self._slot)
        return absolute, absolute % self._values.shape[0]

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
        n = self._count[index]
        times, values = self._times[index, :n], self._values[index, :n]
        keep = times > t - self._cycles * self._period
        return float(np.median(values[keep])) if keep.any() else math.nan

    def learn(self, t: float, value: float) -> None:
        """Add one point to its slot, thinned so that each slot's ring spans ``cycles`` cycles."""
        if math.isnan(self._first_t):
            self._first_t = t
        _, index = self._index(t)
        count, head, cap = self._count[index], self._head[index], self._capacity
        # a fast series (15 s samples) would fill a slot's ring within one cycle
        spacing = self._slot / max(1, cap // self._cycles)
        if count and t - float(self._times[index, head - 1]) < spacing:
            return
        if count < cap and count == self._times.shape[1]:
            self._widen(min(cap, max(count + 4, count + count // 4)))
        self._times[index, head] = t
        self._values[index, head] = value
        self._head[index] = (head + 1) % cap
        if count < cap:
            self._count[index] = count + 1

    def _widen(self, width: int) -> None:
        # a slot that is not full has head == count: its values are row[:count], unmoved
        for name in ("_times", "_values"):
            old = getattr(self, name)
            new = np.empty((old.shape[0], width), dtype=np.float64)
            new[:, : old.shape[1]] = old
            setattr(self, name, new)

    def allocated(self) -> int:
        """Floats held: both arrays at their current width."""
        return int(self._times.size + self._values.size)

    def filled(self) -> int:
        """Floats kept: a time and a value per kept sample."""
        return 2 * sum(self._count)

    def _ring_state(self, data: npt.NDArray[np.float64], index: int) -> dict[str, Any]:
        n, head = self._count[index], self._head[index]
        kept = data[index, :n] if n < self._capacity else np.concatenate(
            [data[index, head:n], data[index, :head]])
        return ring_state(kept, self._capacity)

    def to_state(self) -> dict[str, Any]:
        """JSON-ready state (the cached slot reference included, for identical replay).

        Each slot as a ring state, as before the slots shared two arrays: old and
        new states load either way.
        """
        n_slots = self._values.shape[0]
        return {
            "period": self._period, "slot": self._slot, "cycles": self._cycles,
            "min_cycles": self._min_cycles, "capacity": self._capacity,
            "first_t": None if math.isnan(self._first_t) else self._first_t,
            "cache_key": self._cache_key,
            "cache_value": None if math.isnan(self._cache_value) else self._cache_value,
            "times": [self._ring_state(self._times, i) for i in range(n_slots)],
            "values": [self._ring_state(self._values, i) for i in range(n_slots)],
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> SeasonalProfile:
        """Rebuild a profile saved by ``to_state``."""
        p = cls(float(state["period"]), float(state["slot"]), int(state["cycles"]),
                int(state["capacity"]), int(state["min_cycles"]))
        n_slots = p._values.shape[0]
        if len(state["times"]) != n_slots or len(state["values"]) != n_slots:
            raise ValueError("profile state has the wrong number of slots")
        rows_t = [Ring.from_state(s).kept() for s in state["times"]]
        rows_v = [Ring.from_state(s).kept() for s in state["values"]]
        if any(len(a) != len(b) or len(a) > p._capacity for a, b in zip(rows_t, rows_v, strict=True)):
            raise ValueError("profile state has slots of different or too many samples")
        width = max((len(r) for r in rows_t), default=0)
        p._widen(width)
        for i, (rt, rv) in enumerate(zip(rows_t, rows_v, strict=True)):
            p._times[i, : len(rt)] = rt
            p._values[i, : len(rv)] = rv
            p._count[i] = len(rt)
            p._head[i] = len(rt) % p._capacity
        p._first_t = math.nan if state["first_t"] is None else float(state["first_t"])
        p._cache_key = int(state["cache_key"])
        p._cache_value = math.nan if state["cache_value"] is None else float(state["cache_value"])
        return p

