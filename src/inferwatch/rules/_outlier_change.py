"""An outlier rule's ``change:``: each member's own history next to the peer test.

The peer test alone compares one instant: a member 1.5× slower than its peers
and a member in a two-minute spike (or a slow noise excursion that happens to
peak) look alike. The member's own history tells them apart. At every
evaluation each member's distance to its group's median is measured in the
group's *averaged* spread (the scaled MAD, exponentially averaged over
``spread_over``, so a group of four is not judged by a MAD of four values; the
average is normalised by the weights seen, so a group's first minutes use the mean
of the spreads they have rather than the first one), and kept for
``window + before`` seconds. A member starts to be an outlier when

* every distance of the last ``window`` (or ``change.share`` of them, rounded
  up) is past the median of its distances in the ``before`` span just before it
  by more than ``change.tolerance`` (on the paging side): an abrupt move (a
  gradual excursion has no such step) that has stayed for the whole window (a
  spike shorter than the window has not); the
  step counts from the group's median at most (a member coming back from the
  other side, the end of a spike or a dip, returns to its peers: no step), and
* it is now more than the rule's ``tolerance`` averaged spreads and
  ``min_deviation`` (in the expression's unit) from the median;

it stays one while that last condition holds. The member's own bias (members are not
alike) cancels in the step, so no bias is learned. ``for`` applies as usual.

The state (the averaged spreads, each member's recent distances and whether it
is an outlier) is saved with the alert state and restored on restart; a member
with no history yet cannot page by ``change`` until its window has filled.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from inferwatch.rules._outlier import PeerGroup, PeerMember
from inferwatch.settings import OutlierChange, OutlierSpec

__all__ = ["ChangeTracker"]


class ChangeTracker:
    """The member histories of one outlier rule with ``change:``, judging each evaluation."""

    def __init__(self, spec: OutlierSpec) -> None:
        if spec.change is None:
            raise ValueError("ChangeTracker needs an outlier spec with change")
        self.spec = spec
        self.change: OutlierChange = spec.change
        self._spread: dict[str, tuple[float, float, float]] = {}  # group -> (averaged spread, weight, at)
        self._history: dict[str, list[tuple[float, float]]] = {}  # member -> [(t, distance)]
        self._outlier: set[str] = set()

    def judge(self, ts: float, groups: Sequence[PeerGroup]) -> list[PeerGroup]:
        """``groups`` with each member's verdict decided by its history (and the history updated)."""
        out = [self._group(ts, g) for g in groups]
        self._prune(ts, {_key(g.key) for g in groups})
        return out

    def _group(self, ts: float, g: PeerGroup) -> PeerGroup:
        spread = self._averaged(ts, _key(g.key), g.spread)
        members = tuple(self._member(ts, g, m, spread) for m in g.members)
        return replace(g, members=members)

    def _averaged(self, ts: float, key: str, spread: float) -> float:
        # the exponentially weighted mean of the spreads seen so far, normalised by the weights
        # seen (a group's first minutes average the few spreads they have, not the first one)
        old = self._spread.get(key)
        if old is None:
            value, weight = spread, 1.0
        elif ts <= old[2]:
            value, weight = old[0], old[1]
        else:
            weight = old[1] * math.exp(-(ts - old[2]) / self.change.spread_over) + 1.0
            value = old[0] + (spread - old[0]) / weight
        self._spread[key] = (value, weight, ts)
        return value

    def _member(self, ts: float, g: PeerGroup, m: PeerMember, spread: float) -> PeerMember:
        key = json.dumps(m.labels.without_name().to_dict(), sort_keys=True)
        dev = m.value - g.median
        z = dev / spread if spread > 0 else (0.0 if dev == 0 else math.copysign(math.inf, dev))
        horizon = ts - self.change.window - self.change.before
        hist = [(t, d) for t, d in self._history.get(key, []) if horizon < t < ts] + [(ts, z)]
        self._history[key] = hist
        far = g.judged and self._side(dev) > self.spec.min_deviation
        # beyond the peers now; then: already an outlier (kept), or it just stepped away (starts)
        outlier = far and self._side(z) > self.spec.tolerance and (
            key in self._outlier or self._stepped(ts, hist))
        if outlier:
            self._outlier.add(key)
        else:
            self._outlier.discard(key)
        return replace(m, outlier=outlier)

    def _stepped(self, ts: float, hist: list[tuple[float, float]]) -> bool:
        edge = ts - self.change.window
        before = [d for t, d in hist if t <= edge]
        window = [d for t, d in hist if t > edge]
        if not before:  # no level before the window yet (a new member, or just restarted)
            return False
        level = statistics.median(before)
        now = window[-1]  # a step counts on the side where the member is now (both: not a return)
        # ... and only from the median on: coming back from the other side (a spike ending, a
        # dip recovering) is a return to the peers, not a move away from them
        if now > 0 and self.spec.direction != "below":
            moved = [d - max(level, 0.0) for d in window]
        elif now < 0 and self.spec.direction != "above":
            moved = [min(level, 0.0) - d for d in window]
        else:
            return False
        need = math.ceil(self.change.share * len(window) - 1e-9)
        return sum(m > self.change.tolerance for m in moved) >= need

    def _side(self, dev: float) -> float:
        return {"above": dev, "below": -dev, "both": abs(dev)}[self.spec.direction]

    def _prune(self, ts: float, seen: set[str]) -> None:
        horizon = ts - self.change.window - self.change.before
        for key in [k for k, h in self._history.items() if not h or h[-1][0] <= horizon]:
            del self._history[key]
            self._outlier.discard(key)
        for key in [k for k, (_, _, at) in self._spread.items()
                    if k not in seen and at <= ts - self.change.spread_over]:
            del self._spread[key]

    def export_state(self) -> Any:
        """JSON-serialisable state, saved with the alert state."""
        return {"spread": {k: list(v) for k, v in self._spread.items()},
                "history": {k: [list(p) for p in h] for k, h in self._history.items()},
                "outlier": sorted(self._outlier)}

    def restore_state(self, state: Any) -> None:
        """Restore what :meth:`export_state` returned (a damaged state is ignored: the window refills)."""
        try:
            spread = {str(k): _spread_entry(v) for k, v in state["spread"].items()}
            history = {str(k): [(float(t), float(d)) for t, d in h] for k, h in state["history"].items()}
            outlier = {str(k) for k in state["outlier"]}
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            return
        self._spread, self._history, self._outlier = spread, history, outlier & set(history)


def _spread_entry(v: Any) -> tuple[float, float, float]:
    """A saved ``[spread, weight, at]`` (``[spread, at]``, saved before the weight: a settled average)."""
    if len(v) == 2:
        return float(v[0]), 100.0, float(v[1])
    return float(v[0]), float(v[1]), float(v[2])


def _key(group: tuple[str, ...]) -> str:
    return json.dumps(list(group))
