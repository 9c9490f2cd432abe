"""Recurring excursions: hold an alert while the series only repeats what it has done before.

A band flags what the seasonal model cannot explain, and some series make the same
unexplained move again and again: a CPU that bursts to 100 % every few days at no fixed
hour, a key that is held down for a while now and then. Each burst leaves the band and
would page someone, although it is the series' everyday behaviour. The gate remembers
the series' earlier *excursions* and holds a new one while it stays within them.

* An excursion is a run of out-of-band points, joined over up to ``gap`` in-band points
  (the alert rule's merge gap), that had at least ``debounce`` out-of-band points in a
  row (so it was an alert). It leaves its peak on each side it went: the highest value
  above the expected one, the lowest below it.
* A new excursion is *held* while its values stay within the ``count``-th most extreme
  peak, on its side, of the excursions that ended in the last ``horizon`` seconds (its
  side: that of its largest deviation from the expected value so far). From its first
  point beyond that it is *released*, for the rest of the excursion.
  With fewer than ``count`` such excursions it is released at once, so the first
  excursions of a series always alert; ``count`` 0 turns the gate off.

So the third burst to 100 % within the horizon is held, while a burst that goes higher
than those before, or a drop where the series only ever went up, alerts as before.
State is bounded: at most ``kept`` excursions are remembered.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

from inferwatch.baseline._settings import BaselineSettings

__all__ = ["RecurrenceGate", "recurrence_gate"]


class _Excursion:
    __slots__ = ("confirmed", "far", "high", "low", "normal", "released", "run")

    def __init__(self) -> None:
        self.high = -math.inf  # highest value above the expected one
        self.low = math.inf  # lowest value below it
        self.far = (0.0, True)  # the largest |value - expected| so far, and its side
        self.run = 0  # out-of-band points in a row
        self.normal = 0  # in-band points in a row
        self.confirmed = False  # had `debounce` out-of-band points in a row: it alerted
        self.released = False


class RecurrenceGate:
    """Per-series memory of excursions (see the module docstring); O(kept) per out-of-band point.

    >>> g = RecurrenceGate(count=2, horizon=86400.0, gap=0, debounce=1)
    >>> def burst(t, peak):  # one point at `peak`, then one back at the expected 30
    ...     return [g.step(t, peak, 30.0, True), g.step(t + 1.0, 30.0, 30.0, False)][0]
    >>> [burst(t, 100.0) for t in (0.0, 10.0, 20.0)]  # the third burst to 100 is held
    [True, True, False]
    >>> burst(30.0, 120.0)  # higher than the bursts before: released
    True
    """

    def __init__(self, count: int, horizon: float, gap: int, debounce: int, kept: int = 64) -> None:
        if count < 0 or horizon <= 0 or gap < 0 or debounce < 1 or kept < max(count, 1):
            raise ValueError("recurrence gate needs count >= 0, horizon > 0, gap >= 0, "
                             "debounce >= 1 and kept >= count")
        self.count, self.horizon, self.gap, self.debounce = count, horizon, gap, debounce
        self._past: deque[tuple[float, bool, float]] = deque(maxlen=kept)  # (ended, above, peak)
        self._current: _Excursion | None = None
        self._last_t = -math.inf

    @property
    def held(self) -> bool:
        """Whether the excursion in progress is held (there is one, and it is not released)."""
        return self._current is not None and not self._current.released

    def familiar(self, above: bool, t: float) -> float | None:
        """The level a new excursion on that side must pass at ``t`` (``None``: not yet known)."""
        if not self.count:
            return None
        peaks = [p for ended, side, p in self._past if side is above and t - ended <= self.horizon]
        if len(peaks) < self.count:
            return None
        peaks.sort(reverse=above)
        return peaks[self.count - 1]

    def step(self, t: float, value: float, expected: float, outside: bool) -> bool:
        """Feed one scored point; whether it may alert (``outside`` and not held).

        With no expected value (NaN: no band yet) the gate does not apply: ``outside``.
        """
        if math.isnan(expected):
            return outside
        cur = self._current
        if not outside:
            if cur is not None:
                cur.run = 0
                cur.normal += 1
                if not cur.confirmed or cur.normal > self.gap:
                    self._close(cur)
            return False
        if cur is None:
            cur = self._current = _Excursion()
        self._last_t = t
        cur.normal = 0
        cur.run += 1
        cur.confirmed = cur.confirmed or cur.run >= self.debounce
        above = value > expected
        if above:
            cur.high = max(cur.high, value)
        else:
            cur.low = min(cur.low, value)
        if abs(value - expected) > cur.far[0]:
            cur.far = (abs(value - expected), above)
        if not cur.released:
            side = cur.far[1]
            level = self.familiar(side, t)
            cur.released = level is None or (cur.high > level if side else cur.low < level)
        return cur.released

    def _close(self, cur: _Excursion) -> None:
        if cur.confirmed:
            if cur.high > -math.inf:
                self._past.append((self._last_t, True, cur.high))
            if cur.low < math.inf:
                self._past.append((self._last_t, False, cur.low))
        self._current = None

    def to_state(self) -> dict[str, Any]:
        """JSON-ready state; ``from_state`` continues exactly where this left."""
        cur = self._current
        return {
            "count": self.count, "horizon": self.horizon, "gap": self.gap,
            "debounce": self.debounce, "kept": self._past.maxlen,
            "past": [[e, a, p] for e, a, p in self._past],
            "last_t": None if math.isinf(self._last_t) else self._last_t,
            "current": None if cur is None else {
                "high": None if math.isinf(cur.high) else cur.high,
                "low": None if math.isinf(cur.low) else cur.low,
                "far": list(cur.far), "run": cur.run, "normal": cur.normal,
                "confirmed": cur.confirmed, "released": cur.released},
        }

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> RecurrenceGate:
        """Rebuild a gate saved by ``to_state`` (``ValueError`` on a malformed state)."""
        try:
            g = cls(int(state["count"]), float(state["horizon"]), int(state["gap"]),
                    int(state["debounce"]), int(state["kept"]))
            g._past.extend((float(e), bool(a), float(p)) for e, a, p in state["past"])
            g._last_t = -math.inf if state["last_t"] is None else float(state["last_t"])
            c = state["current"]
            if c is not None:
                cur = g._current = _Excursion()
                cur.high = -math.inf if c["high"] is None else float(c["high"])
                cur.low = math.inf if c["low"] is None else float(c["low"])
                cur.far = (float(c["far"][0]), bool(c["far"][1]))
                cur.run, cur.normal = int(c["run"]), int(c["normal"])
                cur.confirmed, cur.released = bool(c["confirmed"]), bool(c["released"])
        except (KeyError, TypeError, IndexError) as exc:
            raise ValueError(f"not a recurrence gate state: {exc!r}") from exc
        return g


def recurrence_gate(config: BaselineSettings, count: int | None = None) -> RecurrenceGate | None:
    """The gate the config asks for (``count`` overrides ``config.recurrence``); ``None`` when off."""
    n = config.recurrence if count is None else count
    if not n:
        return None
    return RecurrenceGate(n, config.recurrence_horizon, config.merge_gap, config.debounce)
