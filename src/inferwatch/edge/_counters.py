"""Counters on the deadband: piecewise-linear segments the server interpolates.

A counter is sent as the ends of straight segments: between two sent points
the server fills the counter in linearly, at the device's collection step
(``server/ingest/_edge_fill.py``), so ``rate()`` and ``increase()`` over any window see
a counter as Prometheus would have scraped it. A segment is closed, and the
point before the last sent, when the line from the segment's start to the new
point leaves a held point's budget, when the counter went down (a reset: the
top before the drop and the drop are sent, never joined by a line), or when
the gap since the segment's start reached the series' heartbeat.

What an alert reads is ``rate(x[5m])`` (``_rates``): a window's error is that of
the line at its two ends, against the increase inside it -- or one increment
(the counter's smallest step: one request, one jiffy) when less went by. So a
point's budget is the smaller of two shares of the band (``fits``): ``band / 4``
of the increase over the 5 minutes before it (the rate then, its own step's and
the one before: a sudden change is a corner) and ``band / 2`` of the increase
after it, as far as it is seen (stretched to the window at most twice), never
under that share of one increment. The second is what issue #52's 375 % missed:
an idle CPU counter just after a burst was held to the burst's budget, and a
window starting there saw a quarter of the burst it never held. The points of
the open segment are kept (a flat run as its two ends; at most ``MAX_HELD``)
and each new point re-checks them all. ``simulate`` measures the worst window
of every counter and reports it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["RATE_WINDOW_S", "CounterState"]

EPS_DIVISOR = 4.0  # a point's own budget: band / 4 of the increase over the window before it
AFTER_DIVISOR = 2.0  # ... and band / 2 of the increase after it as far as seen,
SINCE_STRETCH = 2.0  # stretched to the window at most this many times
RATE_WINDOW_S = 300.0  # the rate window whose error the segments bound (Prometheus's usual 5m)
MAX_HELD = 64  # a segment holding this many unsent points is closed (bounds the work per point)


@dataclass(slots=True)  # one per counter series
class CounterState:
    """A counter's open segment: its start (sent), the points seen since (unsent), the last two points."""

    t: float  # segment start (last sent)
    v: float
    rt: float  # last point seen
    rv: float
    rsent: bool
    pt: float = math.nan  # the point seen before it
    pv: float = math.nan
    psent: bool = True
    ew: float = 0.0  # the counter's recent rate (exponentially weighted over RATE_WINDOW_S / 4)
    slow: float = 0.0  # and over RATE_WINDOW_S (a burst is not the window's rate)
    inst: float = 0.0  # over the last step
    eps: float = 0.0  # the last point's own budget
    hb: float = 0.0  # this series' current heartbeat (backs off while it never moves)
    moved: bool = False  # moved since the last heartbeat
    floor: float = 0.0  # its unit's floor (gauges' business; a counter's floor is its own increment)
    unit: tuple[str, ...] | None = None  # the histogram or summary it belongs to (sent as one)
    inc: float = math.inf  # its smallest increase between two points so far (one event, one jiffy)
    held: list[tuple[float, float, float]] = field(default_factory=list)  # (t, v, eps) since the start
    band: float = 0.1

    def restart(self, t: float, v: float, band: float, floor: float) -> None:
        """Start a new segment at (t, v), a point that is sent."""
        self.t, self.v, self.band = t, v, band
        self.held = [p for p in self.held if p[0] > t]

    def observe(self, dt: float, dv: float, band: float, floor: float) -> None:
        """Follow the rate (a step of ``dt`` seconds that added ``dv``); the point's own budget follows it."""
        rate, before = dv / dt, self.inst
        if dv > 0:
            self.inc = min(self.inc, dv)
        self.ew += (1.0 - math.exp(-dt / (RATE_WINDOW_S / 4.0))) * (rate - self.ew)
        self.slow += (1.0 - math.exp(-dt / RATE_WINDOW_S)) * (rate - self.slow)
        self.inst = rate
        # a point's budget comes from the rate before it and its own: a sudden change either way
        # is a corner, sent (``fits`` adds the rate after it)
        increase = min(self.ew, self.slow, before, rate) * RATE_WINDOW_S
        self.eps = band * max(increase, self._least()) / EPS_DIVISOR

    def _least(self) -> float:
        return self.inc if self.inc < math.inf else 0.0

    def fits(self, t: float, v: float) -> bool:
        """Whether the line from the segment's start to (t, v) stays within every held point's budget.

        A held point's budget is the smaller of its own (the rate before it when it came) and a
        share of the increase since it: a window starting at that point sees at least that much,
        so a counter whose rate falls after a point makes it a corner. When the line fits,
        (t, v) is held too.
        """
        dt = t - self.t
        if dt <= 0 or (self.held and self.held[-1][0] >= t):  # the start, or a point already held
            return True
        slope, least = (v - self.v) / dt, self._least()
        share = self.band / AFTER_DIVISOR
        for pt, pv, eps in self.held:
            since = (v - pv) * RATE_WINDOW_S / max(t - pt, RATE_WINDOW_S / SINCE_STRETCH)
            budget = min(eps, share * max(since, least))
            if abs(self.v + slope * (pt - self.t) - pv) > budget:
                return False
        held = self.held
        if len(held) >= 2 and held[-1][1] == v == held[-2][1]:  # a flat run: its ends bound it
            held[-1] = (t, v, min(self.eps, held[-1][2]))
            return True
        if len(held) >= MAX_HELD:
            return False
        held.append((t, v, self.eps))
        return True


def offer_counter(st: CounterState, t: float, v: float, band: float, floor: float,
                  heartbeat: float, heartbeat_max: float) -> list[tuple[float, float]]:
    """The points of a counter to send because (t, v) arrived after ``st.rt`` (0, 1 or 2)."""
    out: list[tuple[float, float]] = []
    st.pt, st.pv, st.psent = st.rt, st.rv, st.rsent
    st.rt, st.rv, st.rsent = t, v, False
    if not (math.isfinite(v) and math.isfinite(st.pv)) or v < st.pv:  # a reset or a NaN: no line across
        if not st.psent:
            out.append(cut_previous(st, band, floor))
        out.append(send_current(st, band, floor))
        st.hb, st.moved = heartbeat, False
        return out
    if v != st.pv:  # it moves: back to the short heartbeat at once (a rise is sent within it)
        st.moved, st.hb = True, heartbeat
    st.observe(t - st.pt, v - st.pv, band, floor)
    if not st.fits(t, v):
        out.append(cut_previous(st, band, floor))
        st.fits(t, v)  # the new segment, from the previous point, holds this one
        st.hb = heartbeat
    if t - st.t >= st.hb:  # a counter that never moves backs off, up to heartbeat_max
        st.hb = heartbeat if st.moved else min(st.hb * 2.0, heartbeat_max)
        st.moved = False
        out.append(send_current(st, band, floor))
    return out


def cut_previous(st: CounterState, band: float, floor: float) -> tuple[float, float]:
    """Close the segment at the point before the last: it is sent and starts the next one."""
    st.psent = True
    st.restart(st.pt, st.pv, band, floor)
    return st.pt, st.pv


def send_current(st: CounterState, band: float, floor: float) -> tuple[float, float]:
    """Close the segment at the last point seen: it is sent and starts the next one."""
    st.rsent = True
    st.restart(st.rt, st.rv, band, floor)
    return st.rt, st.rv
