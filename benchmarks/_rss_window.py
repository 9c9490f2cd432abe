"""RSS growth over a run's last minutes, as issue 46's Done-when reads it: "RSS growth ≤ 10 % over the
last 5 minutes of a 15-minute run".

The growth is the last sample over the sample five minutes before it. A server answering heavy
queries holds their arrays only while they run, so one sample can sit on a peak or in a trough:
the medians of the window's first and last minute are printed beside it (the steadier reading),
with the peak.

>>> w = last_minutes([(0.0, 100), (60.0, 110), (120.0, 120), (400.0, 130), (420.0, 132)], minutes=5)
>>> round(w.growth * 100, 1), w.first, w.last
(10.0, 120, 132)
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

__all__ = ["RssWindow", "last_minutes"]

MIB = 2**20


@dataclass(frozen=True)
class RssWindow:
    """RSS (bytes) over the last ``minutes`` of a run: its first and last samples, the medians of its
    first and last minute, its peak."""

    minutes: float
    first: int
    last: int
    first_median: float
    last_median: float
    peak: int

    @property
    def growth(self) -> float:
        """The last sample over the first, less one (0.1 is +10 %)."""
        return (self.last - self.first) / self.first

    @property
    def median_growth(self) -> float:
        """The last minute's median over the first minute's, less one."""
        return (self.last_median - self.first_median) / self.first_median

    def text(self) -> str:
        """One line: growth first (the Done-when's figure), then the minute medians and the peak."""
        return (f"{self.growth * 100:+.1f} % ({self.first / MIB:,.0f} -> {self.last / MIB:,.0f} MiB); "
                f"first and last minute's medians {self.first_median / MIB:,.0f} -> "
                f"{self.last_median / MIB:,.0f} MiB ({self.median_growth * 100:+.1f} %); "
                f"peak {self.peak / MIB:,.0f} MiB")


def last_minutes(rss: list[tuple[float, int]], minutes: float = 5.0) -> RssWindow | None:
    """The window of the last ``minutes`` of ``(seconds, bytes)`` samples; ``None`` when the run is
    shorter than the window."""
    if not rss or rss[-1][0] - rss[0][0] < minutes * 60:
        return None
    end = rss[-1][0]
    window = [(t, v) for t, v in rss if t >= end - minutes * 60]
    head = [v for t, v in window if t < window[0][0] + 60]
    tail = [v for t, v in window if t > end - 60]
    return RssWindow(minutes, window[0][1], window[-1][1], median(head), median(tail),
                     max(v for _, v in window))
