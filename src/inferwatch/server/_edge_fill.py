"""Edge series as Prometheus would have scraped them: the points between two sent ones, filled in.

The agent's deadband sends a gauge when it moved past the band (the last value
holds until then) and a counter at the ends of straight segments (the line
holds). A version-3 batch says which series are counters and the device's
collection step, so the server stores what the device saw, within the band:
between two consecutive sent points of a series, one point every step --
the earlier value for a gauge, the line for a counter (so ``rate()`` and
``increase()`` over any window work as on scraped data). Nothing is filled
across a gap longer than the batch's ``heartbeat_max`` plus two steps (the
device was off), across a counter going down (a reset: the agent sends both
sides), or next to NaN and the staleness marker.

The last sent point of each series is kept in memory: after a server restart
the first gap of each series is not filled (its later ones are).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

from inferwatch.model import Labels, Sample

__all__ = ["MAX_FILL_POINTS", "Filler"]

MAX_FILL_POINTS = 2000  # per gap: a step of 1 s over a 30-minute back-off at most


class Filler:
    """Fills the gaps of one server's edge series (see the module docstring); thread-safe."""

    def __init__(self) -> None:
        self._last: dict[Labels, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def fill(self, samples: list[Sample], is_counter: Callable[[Labels], bool], step: float,
             max_gap: float) -> list[Sample]:
        """``samples`` (a batch, device label set) with the points between sent ones added."""
        if not step > 0:
            return samples
        out: list[Sample] = []
        limit = max_gap + 2 * step
        with self._lock:
            for s in samples:
                prev = self._last.get(s.labels)
                if prev is not None and s.t > prev[0]:
                    out.extend(_between(s.labels, prev, (s.t, s.v), step, limit, is_counter(s.labels)))
                if prev is None or s.t > prev[0]:
                    self._last[s.labels] = (s.t, s.v)
                out.append(s)
        return out

    def __len__(self) -> int:
        return len(self._last)


def _between(labels: Labels, a: tuple[float, float], b: tuple[float, float], step: float, limit: float,
             counter: bool) -> list[Sample]:
    (t0, v0), (t1, v1) = a, b
    gap = t1 - t0
    if gap > limit or gap < 1.5 * step or not (math.isfinite(v0) and math.isfinite(v1)):
        return []
    if counter and v1 < v0:
        return []
    n = min(round(gap / step), MAX_FILL_POINTS)
    dt = gap / n
    if counter:
        return [Sample(labels, t0 + k * dt, v0 + (v1 - v0) * k / n) for k in range(1, n)]
    return [Sample(labels, t0 + k * dt, v0) for k in range(1, n)]
