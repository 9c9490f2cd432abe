"""The forecast band and the interface every baseline method implements."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = ["Band", "Baseline", "Direction", "band_excess", "is_anomalous", "on_side"]

Direction = Literal["above", "below", "both"]


@dataclass(frozen=True, slots=True)
class Band:
    """What a baseline expects at one time: the expected value and the band around it.

    >>> b = Band(10.0, 8.0, 12.0); b.contains(11.0), b.contains(13.0)
    (True, False)
    """

    expected: float
    lower: float
    upper: float

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies inside the band (bounds included)."""
        return self.lower <= value <= self.upper


def is_anomalous(band: Band | None, value: float, direction: Direction = "both") -> bool:
    """Whether ``value`` leaves ``band`` on the watched side; no band or NaN is never anomalous."""
    if band is None or math.isnan(value):
        return False
    if direction == "above":
        return value > band.upper
    if direction == "below":
        return value < band.lower
    return not band.contains(value)


def band_excess(band: Band, value: float) -> float:
    """|value - expected| over the band's half-width on the value's side (1: on the edge)."""
    half = band.upper - band.expected if value >= band.expected else band.expected - band.lower
    return abs(value - band.expected) / max(half, 1e-12)


def on_side(band: Band | None, value: float, direction: Direction) -> bool:
    """Whether a novelty flag on ``value`` counts for ``direction`` (a drop does not fire an
    ``above`` rule); without a band there is no expected value to tell, so it counts."""
    return band is None or direction == "both" or (value >= band.expected) == (direction == "above")


class Baseline(Protocol):
    """A per-series forecaster: score a point against its history, then learn it.

    ``predict(t)`` gives the band at ``t`` from the history so far (``None``
    while that history is too short); ``learn(t, value)`` adds the point. Both
    cost O(1) amortised and never raise on odd values (NaN is skipped).
    """

    def predict(self, t: float) -> Band | None:
        """The band at time ``t`` (epoch seconds), or ``None`` while history is short."""
        ...

    def learn(self, t: float, value: float) -> None:
        """Add the point ``(t, value)`` to the history."""
        ...

    @property
    def learned(self) -> bool:
        """Whether enough history has been seen for a band (``predict`` may answer)."""
        ...

    def to_state(self) -> dict[str, Any]:
        """JSON-ready state that the method's ``from_state`` restores exactly."""
        ...
