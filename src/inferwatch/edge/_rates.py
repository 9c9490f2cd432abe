"""Counters on the deadband, measured as an alert reads them: ``rate(x[5m])`` at the server.

``edge simulate`` rebuilds every counter (plain counters, histogram buckets, ``_count``
and ``_sum``, summary ``_count`` and ``_sum``) as the server stores it -- the sent
points, and between two of them the points the server fills in on the line at the
device's step (:func:`rebuild`, the same rule as ``server/ingest/_edge_fill``: no
line across a drop, a gap longer than ``heartbeat_max`` plus two steps, or NaN) --
and compares Prometheus's ``rate()`` (extrapolated, resets added back, as in
``promql/functions.go`` of v2.42) over every 5-minute window ending at a raw
instant, on the raw trace and on the rebuilt series. The error of a window is

    |rate(rebuilt) - rate(raw)| / max(rate(raw), increment / window)

with ``increment`` the counter's smallest positive step in the trace (one event for
a request counter, one jiffy for CPU seconds): a counter that moves once in five
minutes must show that one event, not a tenth of it. Windows end halfway between two raw
instants, as a rule's evaluation falls between two scrapes; windows ending after a series'
last sent point are not measured (the agent sends that tail later), nor windows with an edge
in a scrape the trace missed (a gap of 1.85 steps or more: the trace has no value there, the
server fills the line; ``skipped`` counts them). A window where
the raw trace has a rate and the rebuilt series has none (fewer than two points) is
an error of 1.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from inferwatch.model import Sample

__all__ = ["MIN_FILL_STEP_S", "RateError", "increment_of", "rate_error", "rebuild", "window_rate"]

MIN_FILL_STEP_S = 1.0  # the server takes a step under a second as one second
MAX_FILL_POINTS = 2000  # the server fills at most this many points in one gap
FILL_FROM_STEPS = 1.85  # ... and none in a gap shorter than this many steps (a late scrape)


@dataclass(frozen=True)
class RateError:
    """The worst window of one series: its relative error, where it ends, the two rates."""

    error: float = 0.0
    end: float = math.nan
    raw: float = 0.0
    rebuilt: float = 0.0
    skipped: int = 0  # windows with an edge in a missed scrape (see the module docstring)


def rebuild(sent: Sequence[Sample], step: float, max_gap: float) -> list[tuple[float, float]]:
    """A counter's points as the server stores them: the sent ones and the line filled between."""
    out: list[tuple[float, float]] = []
    step = max(step, MIN_FILL_STEP_S)
    limit = max_gap + 2 * step
    for s in sent:
        if out and s.t <= out[-1][0]:
            continue
        if out and step > 0:
            t0, v0 = out[-1]
            gap = s.t - t0
            if FILL_FROM_STEPS * step <= gap <= limit and math.isfinite(v0) and math.isfinite(s.v) \
                    and s.v >= v0:
                n = min(math.floor(gap / step + 2.0 - FILL_FROM_STEPS), MAX_FILL_POINTS)
                out += [(t0 + k * gap / n, v0 + (s.v - v0) * k / n) for k in range(1, n)]
        out.append((s.t, s.v))
    return out


def increment_of(points: Sequence[tuple[float, float]]) -> float:
    """The smallest positive step between consecutive finite values (0 when it never moves)."""
    steps = [b - a for (_, a), (_, b) in itertools.pairwise(points)
             if b > a and math.isfinite(a) and math.isfinite(b)]
    return min(steps, default=0.0)


class _Series:
    """Times and reset-adjusted cumulative increases, for ``rate()`` over any window in O(log n)."""

    def __init__(self, points: Sequence[tuple[float, float]]) -> None:
        pts = [(t, v) for t, v in points if math.isfinite(v)]
        self.ts = [t for t, _ in pts]
        self.vs = [v for _, v in pts]
        self.acc = [0.0]
        for a, b in itertools.pairwise(self.vs):
            self.acc.append(self.acc[-1] + (b - a if b >= a else b))  # a drop is a reset: add it back

    def rate(self, start: float, end: float) -> float | None:
        """Prometheus's ``rate()`` over ``[start, end]`` (None: fewer than two samples)."""
        lo = bisect.bisect_left(self.ts, start - 1e-9)
        hi = bisect.bisect_right(self.ts, end + 1e-9) - 1
        if hi - lo < 1:
            return None
        return window_rate(self.ts[lo], self.ts[hi], self.vs[lo], self.acc[hi] - self.acc[lo], hi - lo,
                           start, end)


def window_rate(first_t: float, last_t: float, first_v: float, increase: float, gaps: int,
                start: float, end: float) -> float:
    """``extrapolatedRate`` of Prometheus 2.42 for a counter: ``increase`` over ``gaps`` sample gaps."""
    sampled = last_t - first_t
    if sampled <= 0:
        return 0.0
    to_start, to_end = first_t - start, end - last_t
    average = sampled / gaps
    if increase > 0 and first_v >= 0:
        to_start = min(to_start, sampled * (first_v / increase))  # a counter does not go below zero
    threshold = average * 1.1
    interval = sampled + (to_start if to_start < threshold else average / 2)
    interval += to_end if to_end < threshold else average / 2
    return increase * (interval / sampled) / (end - start)


def rate_error(raw: Sequence[Sample], sent: Sequence[Sample], step: float, max_gap: float,
               window: float) -> RateError:
    """The worst window of one counter series (see the module docstring)."""
    if not sent:
        return RateError()
    points = [(s.t, s.v) for s in raw]
    truth, got = _Series(points), _Series(rebuild(sent, step, max_gap))
    floor = increment_of(points) / window
    first, last_sent = points[0][0], sent[-1].t
    worst = RateError()
    times = sorted({t for t, _ in points})
    skipped = 0
    for a, b in itertools.pairwise(times):
        end = (a + b) / 2  # between two scrapes, as a rule evaluates (the server's filled points are
        # within milliseconds of the raw ones, never on them: a window's edge on a raw instant
        # would count a point in one series and not in the other)
        if end - window < first or end > last_sent:
            continue
        if _in_missed_scrape(times, end, step) or _in_missed_scrape(times, end - window, step):
            skipped += 1  # the trace has no value there to compare with (the server fills the line)
            continue
        want = truth.rate(end - window, end)
        if want is None:
            continue
        have = got.rate(end - window, end)
        denom = max(want, floor)
        if denom <= 0:  # a counter that never moved: any rate is wrong
            err = 0.0 if not have else 1.0
        elif have is None:  # a rate on the trace, none at the server
            err = 1.0
        else:
            err = abs(have - want) / denom
        if err > worst.error:
            worst = RateError(err, end, want, math.nan if have is None else have)
    return dataclasses.replace(worst, skipped=skipped)


def _in_missed_scrape(times: Sequence[float], t: float, step: float) -> bool:
    """Whether ``t`` falls in a gap of the trace the server fills in (a scrape missed: no raw value)."""
    k = bisect.bisect_right(times, t)
    return 0 < k < len(times) and times[k] - times[k - 1] >= FILL_FROM_STEPS * max(step, MIN_FILL_STEP_S)
