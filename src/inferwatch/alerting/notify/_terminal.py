"""Local receivers: the terminal, discard, a recorder for tests and replay, the no-credentials fallback."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TextIO

from inferwatch._exceptions import NotifyError
from inferwatch.alerting._notification import Notification
from inferwatch.alerting.notify._template import notification_text

__all__ = ["DiscardNotifier", "FallbackNotifier", "RecordingNotifier", "TerminalNotifier"]


class DiscardNotifier:
    """Sends nothing (a ``discard`` receiver: Alertmanager's receiver without integrations)."""

    def __init__(self, name: str) -> None:
        self.name = f"discard[{name}]"

    def notify(self, n: Notification) -> None:
        """Nothing to deliver."""


class TerminalNotifier:
    """Prints each notification (to ``stream``, standard output by default)."""

    def __init__(self, name: str, stream: TextIO | None = None, external_url: str = "", *,
                 language: str = "en", timezone: str = "UTC") -> None:
        self.name = f"terminal[{name}]"
        self._language, self._timezone = language, timezone
        self._stream = stream
        self._external_url = external_url
        self._lock = threading.Lock()

    def notify(self, n: Notification) -> None:
        """Write the message, prefixed with the receiver."""
        text = notification_text(n, external_url=self._external_url, language=self._language,
                                 timezone=self._timezone)
        out = self._stream or sys.stdout
        with self._lock:
            out.write(f"--- {n.receiver} ---\n{text}\n")
            out.flush()


class FallbackNotifier:
    """Stands in for a receiver without credentials: shows in the terminal what it would send.

    Says once why, so a fresh install never crashes and never hides an alert.
    """

    delivered_as = "printed (no credentials)"
    """The status its deliveries are recorded with: nothing left the machine."""

    def __init__(self, name: str, reason: str, terminal: TerminalNotifier,
                 warn: Callable[[str], None] | None = None) -> None:
        self.name = name
        self.reason = reason
        self._terminal = terminal
        self._warn = warn
        self._said = False

    def notify(self, n: Notification) -> None:
        """Print instead of sending."""
        if not self._said:
            self._said = True
            msg = f"{self.name}: {self.reason}; showing what would have been sent in the terminal"
            (self._warn or (lambda m: print(m, file=sys.stderr)))(msg)
        self._terminal.notify(n)


class RecordingNotifier:
    """Keeps every notification it gets (``sent``); can be told to fail (``fail_next``).

    >>> r = RecordingNotifier("ops")
    >>> r.fail_next(NotifyError("HTTP 503", retryable=True))
    >>> r.sent
    []
    """

    def __init__(self, name: str) -> None:
        self.name = f"recorder[{name}]"
        self.sent: list[Notification] = []
        self._failures: list[NotifyError] = []
        self._lock = threading.Lock()
        self.delivered = threading.Event()

    def fail_next(self, *errors: NotifyError) -> None:
        """The next calls raise these errors, in order."""
        with self._lock:
            self._failures.extend(errors)

    def notify(self, n: Notification) -> None:
        """Record, or raise the next queued failure."""
        with self._lock:
            if self._failures:
                raise self._failures.pop(0)
            self.sent.append(n)
        self.delivered.set()
