"""Counters on the deadband: piecewise-linear segments (a swinging door) the server interpolates.

A counter is sent as the ends of straight segments: between two sent points
the server fills the counter in linearly, at the device's collection step
(``server/ingest/_edge_ingest.py``), so ``rate()`` and ``increase()`` over any window see
a counter as Prometheus would have scraped it. A segment is closed, and its
last point sent, when no straight line from its start stays within ``eps`` of
every point seen since (the *swinging door*: two slopes, O(1) state), when the
counter went down (a reset: the top before the drop and the drop are sent,
never joined by a line), or when the gap since the segment's start reached the
series' heartbeat.

``eps`` is ``band * max(rate * window, floor) / 4`` with ``rate`` the smallest of
the counter's rate weighted over the last ``window / 4``, over the last
``window``, over the step before the point and over the point's own step (each
point is held to the ``eps`` of its own time, so the door narrows at once when
the rate falls -- an idle CPU counter under a sudden load, a network counter
after a burst: without the point's own step the door stayed wide for one step
and a 5-minute increase was off by 16 % on a recorded device -- a burst does not
widen it, and a sudden change is a corner, sent): the line
through a segment's two ends is within about ``2 * eps`` of every point in
between, so the increase over any ``window`` seconds is off by at most about
``4 * eps = band * max(increase, floor)``: the rate within the band, or the
floor (``simulate`` measures the real worst case of every 5-minute window and
reports it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["RATE_WINDOW_S", "CounterState"]

RATE_WINDOW_S = 300.0  # the rate window whose error the segments bound (Prometheus's usual 5m)


@dataclass(slots=True)  # one per counter series
class CounterState:
    """A counter's open segment: its start (sent), the last two points seen, the door's slopes."""

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
    lo: float = -math.inf
    hi: float = math.inf
    eps: float = 0.0
    hb: float = 0.0  # this series' current heartbeat (backs off while it never moves)
    moved: bool = False  # moved since the last heartbeat
    floor: float = 0.0  # its unit's floor
    unit: tuple[str, ...] | None = None  # the histogram or summary it belongs to (sent as one)

    def restart(self, t: float, v: float, band: float, floor: float) -> None:
        """Start a new segment at (t, v), a point that is sent."""
        self.t, self.v = t, v
        self.lo, self.hi = -math.inf, math.inf
        if not self.eps:  # the first point (afterwards the width follows the rate: observe)
            self.eps = band * floor / 4.0

    def observe(self, dt: float, dv: float, band: float, floor: float) -> None:
        """Follow the rate (a step of ``dt`` seconds that added ``dv``); the door's width follows it."""
        rate, before = dv / dt, self.inst
        self.ew += (1.0 - math.exp(-dt / (RATE_WINDOW_S / 4.0))) * (rate - self.ew)
        self.slow += (1.0 - math.exp(-dt / RATE_WINDOW_S)) * (rate - self.slow)
        self.inst = rate
        # a point's budget comes from the rate before it and its own: a sudden change either way
        # is a corner, sent (a rate that falls narrows the door at the point that shows it)
        self.eps = band * max(min(self.ew, self.slow, before, rate) * RATE_WINDOW_S, floor) / 4.0

    def fits(self, t: float, v: float) -> bool:
        """Whether (t, v) keeps the door open; narrows it when it does (never for t <= start)."""
        dt = t - self.t
        if dt <= 0:
            return True
        lo = max(self.lo, (v - self.eps - self.v) / dt)
        hi = min(self.hi, (v + self.eps - self.v) / dt)
        if lo > hi:
            return False
        self.lo, self.hi = lo, hi
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
        st.fits(t, v)  # the new segment's door, from the previous point
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
