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

A batch also says "every gauge I did not send is unchanged until my latest
instant": the held value of each of the device's gauges is filled in up to
the batch's last instant (at the step, within ``heartbeat_max`` of the series'
last sent point), so instant queries and rules see a quiet gauge whose
heartbeat backed off (``deadband.heartbeat_max``) as they would a scraped one;
a series that went away stops ``heartbeat_max`` after its last sent point.

The last sent point of each series is kept in memory: after a server restart
the first gap of each series is not filled (its later ones are). A batch never
makes the server write more than ``MAX_FILL_PER_BATCH`` filled points, and a
step under a second counts as one second (a wrong ``st`` costs little). A gap shorter
than ``FILL_FROM_STEPS`` steps is the device's own (a late scrape), not filled.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

from inferwatch.model import Labels, Sample

__all__ = ["FILL_FROM_STEPS", "MAX_FILL_POINTS", "Filler"]

MAX_FILL_POINTS = 2000  # per gap: a step of 1 s over a 30-minute back-off at most
MAX_FILL_PER_BATCH = 200_000  # a batch never makes the server write more than this (a bad step)
MIN_STEP_S = 1.0  # a step under a second is taken as one second
# a gap is filled from 1.85 steps: a scrape 12 s late on a 15 s step (a loaded device) is one gap
# of the device's own, not two steps with a point to invent in the middle (a counter's jump in it
# would land half in a 5-minute window that the device's own points leave it out of)
FILL_FROM_STEPS = 1.85


class Filler:
    """Fills the gaps of one server's edge series (see the module docstring); thread-safe."""

    def __init__(self) -> None:
        self._last: dict[Labels, tuple[float, float]] = {}  # last sent point
        self._held: dict[str, dict[Labels, float]] = {}  # device -> its gauges -> filled up to
        self._lock = threading.Lock()

    def fill(self, samples: list[Sample], is_counter: Callable[[Labels], bool], step: float,
             max_gap: float, device: str = "") -> list[Sample]:
        """``samples`` (a batch, device label set) with the points between sent ones added."""
        if not step > 0:
            return samples
        step = max(step, MIN_STEP_S)
        out: list[Sample] = []
        limit = max_gap + 2 * step
        with self._lock:
            held = self._held.setdefault(device, {})
            for s in samples:
                prev = self._last.get(s.labels)
                counter = is_counter(s.labels)
                if prev is not None and s.t > prev[0] and len(out) < MAX_FILL_PER_BATCH:
                    since = max(prev[0], held.get(s.labels, prev[0]))
                    out.extend(_between(s.labels, prev, (s.t, s.v), step, limit, counter, since))
                if prev is None or s.t > prev[0]:
                    self._last[s.labels] = (s.t, s.v)
                    if counter:
                        held.pop(s.labels, None)
                    else:
                        held[s.labels] = s.t
                out.append(s)
            if samples:
                out.extend(self._hold(held, max(s.t for s in samples), step, limit,
                                      MAX_FILL_PER_BATCH - len(out)))
        return out

    def _hold(self, held: dict[Labels, float], until: float, step: float, limit: float,
              budget: int) -> list[Sample]:
        """The device's quiet gauges, their last value held up to ``until`` (the batch's last instant)."""
        out: list[Sample] = []
        gone = []
        for labels, filled in held.items():
            t0, v0 = self._last[labels]
            if until - t0 > limit:  # went away (or the device was off): no longer held
                gone.append(labels)
                continue
            if until - filled < step or not math.isfinite(v0) or len(out) >= budget:
                continue
            n = min(int((until - filled) / step + 1e-9), MAX_FILL_POINTS)
            out += [Sample(labels, filled + k * step, v0) for k in range(1, n + 1)]
            held[labels] = filled + n * step
        for labels in gone:
            del held[labels]
        return out

    def __len__(self) -> int:
        return len(self._last)


def _between(labels: Labels, a: tuple[float, float], b: tuple[float, float], step: float, limit: float,
             counter: bool, since: float) -> list[Sample]:
    (t0, v0), (t1, v1) = a, b
    gap = t1 - t0
    if gap > limit or gap < FILL_FROM_STEPS * step or not (math.isfinite(v0) and math.isfinite(v1)):
        return []
    if counter and v1 < v0:
        return []
    n = min(math.floor(gap / step + 2.0 - FILL_FROM_STEPS), MAX_FILL_POINTS)
    dt = gap / n
    if counter:
        return [Sample(labels, t0 + k * dt, v0 + (v1 - v0) * k / n) for k in range(1, n)]
    # a gauge: held from where the last fill stopped (a batch's end) to just before the new point
    return [Sample(labels, t, v0) for t in (t0 + k * dt for k in range(1, n)) if t > since + 1e-6 and t < t1]
