"""Labels POSTed to the server by other processes, pulled into this process's ``observe_label``.

``Monitor.poll_labels("http://server:9464")`` starts a daemon thread that asks
``GET /api/v1/outcomes?after=CURSOR&limit=N&model=M`` every ``interval``
seconds (at once again while pages come back full) and hands each outcome to
``monitor.observe_label``. A label whose prediction this process never made is
counted by ``RealizedPerformance`` as ``unmatched``; one of another model as
``other_model`` here. A server that cannot be reached is logged once per outage
and polled with a doubling wait (up to ``MAX_BACKOFF_S``). Only the standard
library (``urllib``): loaded when a poller is made, never by ``import inferwatch.sdk``.

>>> import json
>>> from inferwatch.sdk import Monitor
>>> page = {"status": "success", "data": {"next": 2, "last": 2, "outcomes": [
...     {"seq": 1, "request_id": "r1", "label": 1, "model": "ctr"},
...     {"seq": 2, "request_id": "r2", "label": 0, "model": "other"}]}}
>>> with Monitor("ranker", "ctr") as monitor:
...     poller = monitor.poll_labels("http://server:9464", model="ctr", start=False,
...                                  fetch=lambda url, headers, timeout: json.dumps(page).encode())
...     poller.poll_once(), poller.cursor, poller.counts["fed"], poller.counts["other_model"]
(2, 2, 1, 1)
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from inferwatch._exceptions import ConfigError, InputError
from inferwatch.model import Clock

__all__ = ["MAX_BACKOFF_S", "MAX_PAGE_BYTES", "OUTCOMES_PATH", "Fetch", "LabelPoller", "LabelSink",
           "urllib_fetch"]

log = logging.getLogger("inferwatch.sdk")

OUTCOMES_PATH = "/api/v1/outcomes"
MAX_BACKOFF_S = 300.0  # the longest wait between rounds while the server fails
MAX_PAGE_BYTES = 64 << 20  # a page of 10,000 outcomes with the longest strings is under 10 MB
Fetch = Callable[[str, Mapping[str, str], float], bytes]
"""``(url, headers, timeout_s) -> body``: raises ``OSError`` when the server cannot be reached."""


class LabelSink(Protocol):
    """What the poller feeds (a ``Monitor``)."""

    def observe_label(self, request_id: str, label: Any) -> None:
        """Take one label."""

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until what was handed over is aggregated."""


def urllib_fetch(url: str, headers: Mapping[str, str], timeout: float) -> bytes:
    """GET ``url`` with the standard library; an HTTP error raises ``OSError`` with the server's own
    message. Redirects are not followed: urllib would send the ``Authorization`` header along to
    wherever they point (another host, or plain http)."""
    import urllib.error
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None  # urllib then raises HTTPError for the 3xx

    request = urllib.request.Request(url, headers=dict(headers))
    try:
        with urllib.request.build_opener(NoRedirect).open(request, timeout=timeout) as resp:
            return bytes(resp.read(MAX_PAGE_BYTES + 1))
    except urllib.error.HTTPError as exc:
        with exc:
            raise OSError(f"HTTP {exc.code}: {_http_error(exc)}") from None


def _http_error(exc: Any) -> str:
    """What the server said was wrong (its JSON ``error``), else the status's reason."""
    if 300 <= exc.code < 400:
        return f"redirected to {str(exc.headers.get('Location', '?'))[:200]!r}, not followed"
    try:
        said = json.loads(exc.read(4096))["error"]
    except Exception:  # not inferwatch's error document: the status line is all there is
        said = exc.reason
    return str(said)[:300]


class LabelPoller:
    """Pulls outcomes from an inferwatch server into ``monitor.observe_label`` (see the module doc)."""

    def __init__(self, monitor: LabelSink, url: str, *, clock: Clock, model: str | None = None,
                 token: str | None = None, interval: float = 30.0, batch: int = 1000, timeout: float = 10.0,
                 fetch: Fetch | None = None) -> None:
        if not url.startswith(("http://", "https://")):
            raise ConfigError(f"poll_labels: url must start with http:// or https://, got {url[:80]!r}")
        if interval <= 0 or not 1 <= batch <= 10_000 or timeout <= 0:
            raise ConfigError("poll_labels: interval and timeout must be positive, batch 1..10000")
        self.monitor, self.url, self.clock = monitor, url.rstrip("/"), clock
        self.model, self.interval, self.batch, self.timeout = model, interval, batch, timeout
        self._headers = {"Accept": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self._fetch = fetch or urllib_fetch
        self.cursor = 0
        """The sequence number of the last outcome read (the server's ``next``)."""
        self.epoch = ""
        """The name of the server's sequence the cursor counts in (its ``epoch``)."""
        self.counts = {"fed": 0, "other_model": 0, "failed_polls": 0, "resets": 0}
        """Outcomes handed to ``observe_label``, of other models, polls that failed, sequence restarts."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._failing = 0  # failed rounds in a row (the backoff's exponent)

    def poll_once(self) -> int:
        """Read the next page and feed it; return the outcomes read (raises ``OSError``, ``InputError``)."""
        with self._lock:
            query = f"after={self.cursor}&limit={self.batch}"
            if self.model is not None:
                from urllib.parse import quote

                query += f"&model={quote(self.model, safe='')}"
            body = self._fetch(f"{self.url}{OUTCOMES_PATH}?{query}", self._headers, self.timeout)
            outcomes, nxt, last, epoch = _page(body, self.url)
            # the server's sequence started again (a new data directory, a memory store restarted): by
            # its epoch, or by ``last`` below the cursor from a server that names none
            if self.cursor and (last < self.cursor or (epoch and self.epoch and epoch != self.epoch)):
                self.cursor, self.epoch = 0, epoch
                self.counts["resets"] += 1
                return 0
            self.epoch = epoch
            for o in outcomes:
                self._feed(o)
            self.cursor = max(self.cursor, nxt)
            return len(outcomes)

    def _feed(self, outcome: Any) -> None:
        if self.model is not None and outcome.get("model", "") not in ("", self.model):
            self.counts["other_model"] += 1
            return
        self.monitor.observe_label(str(outcome["request_id"]), outcome["label"])
        self.counts["fed"] += 1

    def start(self) -> LabelPoller:
        """Poll every ``interval`` seconds on a daemon thread (the first poll after one interval)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="inferwatch-label-poller", daemon=True)
            self._thread.start()
        return self

    def _run(self) -> None:
        wait = self.interval
        while not self.clock.wait(self._stop, wait):
            wait = self.poll_round()

    def poll_round(self) -> float:
        """One round of the thread: pages until caught up; a failure is counted, not raised, and
        logged once per outage. Return the seconds to wait: ``interval``, doubled per failed round
        in a row up to ``MAX_BACKOFF_S`` (or ``interval`` when longer)."""
        while not self._stop.is_set():
            try:
                full = self.poll_once() >= self.batch
            except Exception as exc:  # the server away or a bad answer: tried again after the wait
                self.counts["failed_polls"] += 1
                self._failing += 1
                # one warning per outage, not one per poll: a server down for a day is one line
                log.log(logging.WARNING if self._failing == 1 else logging.DEBUG,
                        "label poller %s: %s: %s (retrying with backoff; logged again when it recovers)",
                        self.url, type(exc).__name__, exc)
                break
            if self._failing:
                log.info("label poller %s: polls succeed again after %d failed", self.url, self._failing)
                self._failing = 0
            if not full:
                break
            self.monitor.flush(5.0)  # a backlog: let the recorder take this page before the next
        if not self._failing:
            return self.interval
        return min(self.interval * 2.0 ** min(self._failing, 32), max(self.interval, MAX_BACKOFF_S))

    @property
    def running(self) -> bool:
        """Whether the polling thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def __repr__(self) -> str:
        return f"LabelPoller({self.url!r}, cursor={self.cursor}, fed={self.counts['fed']})"


def _page(body: bytes, url: str) -> tuple[list[Any], int, int, str]:
    if len(body) > MAX_PAGE_BYTES:
        raise InputError(f"label poller {url}: an answer over {MAX_PAGE_BYTES} bytes")
    try:
        data = json.loads(body)["data"]
        outcomes, nxt, last = data["outcomes"], int(data["next"]), int(data["last"])
        epoch = str(data.get("epoch") or "")  # a server from before epochs names none
        if not isinstance(outcomes, list) or not all(
                isinstance(o, dict) and "request_id" in o and "label" in o for o in outcomes):
            raise TypeError("outcomes: expected a list of objects with request_id and label")
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"label poller {url}: not an outcomes page ({type(exc).__name__}: {exc})") from None
    return outcomes, nxt, last, epoch
