"""The dead man's switch sender: the Watchdog, every interval, on its own thread.

It never touches the evaluation path or the notification pipeline (a hung outside
service delays only the next Watchdog), reads time from the injected ``Clock``, and
asks ``should_send`` before each send: in an HA pair only the replica holding the
lease sends. Failures are counted (``inferwatch_heartbeat_send_failures_total``, and
in a row for ``HeartbeatSendFailing``) and logged once per change, without secrets.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

import httpx

from inferwatch import _env as env
from inferwatch._exceptions import ConfigError, NotifyError
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting.deadman._watchdog import PAGERDUTY_EVENTS_URL, HeartbeatTarget, watchdog_request
from inferwatch.model import Clock
from inferwatch.settings import HeartbeatSenderSpec, Secret

__all__ = ["HeartbeatSender", "resolve_target"]

log = logging.getLogger(__name__)


def _secret(value: Secret | None, path: str | None, variable: str, field: str,
            environ: Mapping[str, str]) -> Secret | None:
    if environ.get(variable):
        return Secret(environ[variable])
    if path is None:
        return value
    try:
        text = Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError(f"alerting.heartbeat.{field}_file: cannot read {path}: {exc.strerror}") from None
    if not text:
        raise ConfigError(f"alerting.heartbeat.{field}_file: {path} is empty")
    return Secret(text)


def resolve_target(spec: HeartbeatSenderSpec, environ: Mapping[str, str] = os.environ) -> HeartbeatTarget:
    """``spec`` with its secrets read: ``$INFERWATCH_HEARTBEAT_URL``/``_KEY`` first, then the files,
    then the config."""
    url = _secret(spec.url, spec.url_file, env.ENV_HEARTBEAT_URL, "url", environ)
    if url is None and spec.kind == "pagerduty":
        url = Secret(PAGERDUTY_EVENTS_URL)
    if url is None:
        raise ConfigError(f"alerting.heartbeat ({spec.kind}): no url (give url, url_file or "
                          f"${env.ENV_HEARTBEAT_URL})")
    if not url.reveal().startswith(("http://", "https://")):
        raise ConfigError("alerting.heartbeat.url: not an http:// or https:// URL")
    key = _secret(spec.key, spec.key_file, env.ENV_HEARTBEAT_KEY, "key", environ)
    return HeartbeatTarget(spec.kind, url, key)


class HeartbeatSender:
    """Sends the Watchdog to ``target`` every ``interval`` seconds while ``should_send()``.

    ``send_once(now)`` is one round (tests drive it on a simulated clock);
    ``start()`` runs rounds on a thread until ``stop()``.
    """

    def __init__(self, target: HeartbeatTarget, *, clock: Clock, interval: float = 60.0,
                 timeout: float = 10.0, should_send: Callable[[], bool] = lambda: True,
                 source: str | None = None, external_url: str = "",
                 transport: httpx.BaseTransport | None = None) -> None:
        self.target, self.clock, self.interval = target, clock, interval
        self.should_send = should_send
        """Asked before every send; an HA pair sets it to "this replica holds the lease"."""
        self.source = source or socket.gethostname()
        self.external_url = external_url
        self._http = HttpClient(timeout=timeout, transport=transport, clock=clock)
        self._since = clock.now()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.sent = 0
        """Sends attempted (``inferwatch_heartbeat_sends_total``)."""
        self.failures = 0
        """Sends that failed (``inferwatch_heartbeat_send_failures_total``)."""
        self.failing_in_a_row = 0
        """Failed sends since the last success (``HeartbeatSendFailing`` reads it)."""
        self.last_error = ""

    def send_once(self, now: float) -> bool | None:
        """One Watchdog: ``True`` sent, ``False`` failed, ``None`` not this replica's turn."""
        if not self.should_send():
            return None
        req = watchdog_request(self.target, self.source, self._since, now, self.external_url)
        try:
            self._http.request(req.method, req.url, headers=req.headers, json=req.json, content=req.content)
        except NotifyError as exc:
            self._failed(str(exc))
            return False
        with self._lock:
            self.sent += 1
            if self.failing_in_a_row:
                log.warning("heartbeat (%s) sent again after %d failures", self.target.kind,
                            self.failing_in_a_row)
            self.failing_in_a_row, self.last_error = 0, ""
        return True

    def _failed(self, error: str) -> None:
        with self._lock:
            self.sent += 1
            self.failures += 1
            self.failing_in_a_row += 1
            if error != self.last_error:  # once per new error, not once a minute
                log.error("heartbeat (%s) failed: %s; the dead man's switch will page if this goes on",
                          self.target.kind, error)
            self.last_error = error

    def start(self) -> None:
        """Send now and every ``interval`` on a daemon thread."""
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        due = self.clock.monotonic()
        while not self._stop.is_set():
            try:
                self.send_once(self.clock.now())
            except Exception:  # a loop that stops sends nothing: log and go on
                log.exception("heartbeat round failed")
            mono = self.clock.monotonic()
            due = max(due + self.interval, mono)  # a send that ran past the interval: the next one now
            self.clock.wait(self._stop, due - mono)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop sending (the send in flight finishes) and close the connections."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self._http.close()
