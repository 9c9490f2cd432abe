"""Repeated log lines, rate-limited: a storm of one error writes a few lines, not megabytes.

A line is "the same" when its logger, level, message template and exception
type match. The first one in each ``window`` passes (with its traceback);
the repeats are counted and the next one that passes says how many were
suppressed. Tracebacks of repeats are dropped with them.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

__all__ = ["RepeatFilter", "install_repeat_filter"]


class RepeatFilter(logging.Filter):
    """Pass the first of each kind of line per ``window`` seconds, count the rest.

    >>> f = RepeatFilter(window=60.0, monotonic=lambda: 0.0)
    >>> r = logging.LogRecord("x", logging.ERROR, "", 0, "accept failed: %s", ("EMFILE",), None)
    >>> f.filter(r), f.filter(r), f.filter(r)
    (True, False, False)
    """

    def __init__(self, window: float = 10.0, *, monotonic: Callable[[], float] = time.monotonic,
                 max_kinds: int = 10_000) -> None:
        super().__init__()
        self.window = window
        self._monotonic = monotonic
        self._max_kinds = max_kinds
        self._seen: dict[tuple[object, ...], tuple[float, int]] = {}
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        """Whether ``record`` is written (a passing repeat gets the suppressed count appended)."""
        exc = record.exc_info[0] if record.exc_info else None
        key = (record.name, record.levelno, str(record.msg), exc)
        now = self._monotonic()
        with self._lock:
            first, suppressed = self._seen.get(key, (None, 0))
            if first is not None and now - first < self.window:
                self._seen[key] = (first, suppressed + 1)
                return False
            if len(self._seen) >= self._max_kinds:
                self._seen.clear()
            self._seen[key] = (now, 0)
        if suppressed:
            record.msg = f"{record.msg} ({suppressed} similar lines suppressed in the last {self.window:g}s)"
        return True


_INSTALLED = RepeatFilter()


def install_repeat_filter(*loggers: str) -> RepeatFilter:
    """Put the process's one :class:`RepeatFilter` on every handler of the root logger and of ``loggers``."""
    for logger in (logging.getLogger(), *(logging.getLogger(n) for n in loggers)):
        for handler in logger.handlers:
            if _INSTALLED not in handler.filters:
                handler.addFilter(_INSTALLED)
    return _INSTALLED
