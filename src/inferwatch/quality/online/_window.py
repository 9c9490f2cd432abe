"""Tumbling windows on the injected clock's time: ``[k·w, (k+1)·w)``."""

from __future__ import annotations

import math

from inferwatch._exceptions import InputError

__all__ = ["TumblingWindow"]


class TumblingWindow:
    """Tells which window a time falls in and when the open window closes.

    >>> w = TumblingWindow(3600.0)
    >>> w.advance(10.0), w.advance(3599.0), w.advance(3600.0), w.start
    (False, False, True, 3600.0)
    """

    def __init__(self, seconds: float) -> None:
        if not seconds > 0 or not math.isfinite(seconds):
            raise InputError(f"window must be a positive duration, got {seconds}")
        self.seconds = float(seconds)
        self._index: int | None = None

    @property
    def start(self) -> float | None:
        """Start time of the open window (None before the first observation)."""
        return None if self._index is None else self._index * self.seconds

    def previous_start(self, now: float) -> float:
        """Start of the window before ``now``'s: the one a reader at ``now`` scores."""
        return (math.floor(now / self.seconds) - 1) * self.seconds

    def advance(self, now: float) -> bool:
        """Move to ``now``'s window; True when that closed the open window."""
        index = math.floor(now / self.seconds)
        if self._index is None:
            self._index = index
            return False
        if index > self._index:
            self._index = index
            return True
        return False  # time going back (clock skew) keeps the open window
