"""Time, injected: every time-dependent part reads a ``Clock``, never ``time.time()``."""

from __future__ import annotations

import threading
import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "ClockStepDetector", "ScaledClock", "SimulatedClock", "SystemClock"]


@runtime_checkable
class Clock(Protocol):
    """A source of wall time (Unix seconds) and of waiting."""

    def now(self) -> float:
        """Current wall-clock time in Unix seconds."""
        ...

    def monotonic(self) -> float:
        """A monotonic reading in seconds, for measuring durations and scheduling.

        Loops schedule with it and stamp data with ``now()``, so a step of the
        wall clock (NTP, an operator, a VM resume) neither stops nor rushes them.
        """
        ...

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` (a simulated clock advances instead)."""
        ...

    def wait(self, event: threading.Event, timeout: float) -> bool:
        """Wait until ``event`` is set or ``timeout`` passes; return whether it was set."""
        ...


class SystemClock:
    """The real clock.

    >>> SystemClock().now() > 1.6e9
    True
    """

    def now(self) -> float:
        """Current Unix time."""
        return time.time()

    def monotonic(self) -> float:
        """``time.monotonic()``."""
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        """``time.sleep``."""
        if seconds > 0:
            time.sleep(seconds)

    def wait(self, event: threading.Event, timeout: float) -> bool:
        """``event.wait(timeout)``."""
        return event.wait(max(timeout, 0.0))


class SimulatedClock:
    """A clock that moves only when told to; for tests, replay and demos.

    >>> c = SimulatedClock(1000.0)
    >>> c.advance(60); c.now()
    1060.0
    >>> c.sleep(5); c.now()
    1065.0
    >>> c.step(-3600); c.now(), c.monotonic()
    (-2535.0, 1065.0)
    """

    def __init__(self, start: float = 0.0) -> None:
        self._t = float(start)
        self._mono = float(start)
        self._lock = threading.Lock()

    def now(self) -> float:
        """The simulated time."""
        with self._lock:
            return self._t

    def monotonic(self) -> float:
        """Simulated time as a monotonic reading: it moves with ``now()`` except across a :meth:`step`."""
        with self._lock:
            return self._mono

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds`` (must not be negative)."""
        if seconds < 0:
            raise ValueError(f"cannot move a clock backwards (advance by {seconds})")
        with self._lock:
            self._t += seconds
            self._mono += seconds

    def set(self, t: float) -> None:
        """Move time forward to ``t``."""
        with self._lock:
            if t < self._t:
                raise ValueError(f"cannot move a clock backwards (from {self._t} to {t})")
            self._mono += float(t) - self._t
            self._t = float(t)

    def step(self, seconds: float) -> None:
        """Step the wall clock by ``seconds`` (either way) without moving the monotonic reading."""
        with self._lock:
            self._t += seconds

    def sleep(self, seconds: float) -> None:
        """Advance instead of waiting."""
        if seconds > 0:
            self.advance(seconds)

    def wait(self, event: threading.Event, timeout: float) -> bool:
        """Return at once: set events return True, otherwise time advances by ``timeout``."""
        if event.is_set():
            return True
        self.sleep(timeout)
        return event.is_set()


class ScaledClock:
    """Real time running ``speed`` times faster, from ``start`` (the demo's compressed time).

    With ``speed=20`` a rule's ``for: 5m`` passes in 15 real seconds, while
    every part still reads one consistent clock. ``anchor``: the real (epoch) time at which
    the clock read ``start`` (default: now), so two processes given the same ``start`` and
    ``anchor`` read one compressed clock (an HA pair on compressed time).

    >>> import time
    >>> t = time.time()
    >>> a, b = ScaledClock(10, start=t, anchor=t), ScaledClock(10, start=t, anchor=t - 1)
    >>> round(b.now() - a.now())  # b's clock read ``start`` a real second earlier: 10 s ahead
    10
    """

    def __init__(self, speed: float, start: float | None = None, anchor: float | None = None) -> None:
        if speed <= 0:
            raise ValueError(f"speed must be positive, got {speed}")
        self.speed = float(speed)
        self._real0 = time.monotonic() - (0.0 if anchor is None else time.time() - anchor)
        self._sim0 = time.time() if start is None else float(start)

    def now(self) -> float:
        """Compressed wall time."""
        return self._sim0 + (time.monotonic() - self._real0) * self.speed

    def monotonic(self) -> float:
        """Same as ``now()``."""
        return self.now()

    def sleep(self, seconds: float) -> None:
        """Sleep ``seconds`` of compressed time."""
        if seconds > 0:
            time.sleep(seconds / self.speed)

    def wait(self, event: threading.Event, timeout: float) -> bool:
        """Wait up to ``timeout`` compressed seconds for ``event``."""
        return event.wait(max(timeout, 0.0) / self.speed)


class ClockStepDetector:
    """Notices the wall clock moving differently from the monotonic one between two readings.

    >>> c = SimulatedClock(100.0); d = ClockStepDetector(c)
    >>> d.observe()
    0.0
    >>> c.advance(15); c.step(3600); d.observe()
    3600.0
    >>> c.advance(15); d.observe()
    0.0
    """

    def __init__(self, clock: Clock, tolerance: float = 1.0) -> None:
        self.clock = clock
        self.tolerance = tolerance
        self._last: tuple[float, float] | None = None

    def observe(self) -> float:
        """Seconds the wall clock stepped since the last call (0.0 within ``tolerance``)."""
        wall, mono = self.clock.now(), self.clock.monotonic()
        last, self._last = self._last, (wall, mono)
        if last is None:
            return 0.0
        step = (wall - last[0]) - (mono - last[1])
        return step if abs(step) > self.tolerance else 0.0
