"""Serving as the dead man's switch: ``heartbeats`` this server expects, and the page when one stops.

Each configured heartbeat is expected every ``expect_every``; when none has arrived for
``missing_after`` (counted from the server's start for one never heard), a firing
``HeartbeatMissing{heartbeat="NAME"}`` goes into the pipeline, so it is routed, grouped,
silenced and escalated like any alert: one message, then one resolved message when a
heartbeat arrives again. Last-seen times live in memory: after a restart every heartbeat
gets ``missing_after`` of grace again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from inferwatch.config import HeartbeatWatchSpec
from inferwatch.model import Clock, Labels, format_duration
from inferwatch.rules import Alert

__all__ = ["HEARTBEAT_MISSING", "HeartbeatState", "HeartbeatWatch"]

log = logging.getLogger(__name__)
HEARTBEAT_MISSING = "HeartbeatMissing"


@dataclass
class HeartbeatState:
    """What the watch knows of one heartbeat."""

    spec: HeartbeatWatchSpec
    received: int = 0
    last: float | None = None
    missing_since: float | None = None

    def as_json(self, now: float) -> dict[str, object]:
        """The state for ``GET /api/v1/heartbeats``."""
        return {"name": self.spec.name, "expect_every": self.spec.expect_every,
                "missing_after": self.spec.missing_after, "received": self.received,
                "last_received": self.last, "missing": self.missing_since is not None,
                "age_seconds": None if self.last is None else round(now - self.last, 3)}


class HeartbeatWatch:
    """Takes heartbeats (``beat``) and sends ``HeartbeatMissing`` alerts to ``send`` (``check``).

    >>> from inferwatch.config import HeartbeatWatchSpec
    >>> from inferwatch.model import SimulatedClock
    >>> sent = []
    >>> w = HeartbeatWatch([HeartbeatWatchSpec(name="b", expect_every=60, missing_after=180)],
    ...                    SimulatedClock(0.0), lambda alerts, now: sent.extend(alerts))
    >>> w.beat("b", 10.0), w.check(100.0), w.check(191.0)[0].labels["alertname"]
    (True, [], 'HeartbeatMissing')
    """

    def __init__(self, specs: Sequence[HeartbeatWatchSpec], clock: Clock,
                 send: Callable[[Sequence[Alert], float], None], start: float | None = None) -> None:
        self.clock, self._send = clock, send
        self.start_t = clock.now() if start is None else start
        self.states = {s.name: HeartbeatState(s) for s in specs}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def beat(self, name: str, now: float) -> bool:
        """One heartbeat from ``name`` (``False``: no such heartbeat is configured)."""
        resolved: list[Alert] = []
        with self._lock:
            st = self.states.get(name)
            if st is None:
                return False
            st.received, st.last = st.received + 1, now
            if st.missing_since is not None:
                log.warning("heartbeat %s is back after %s", name,
                            format_duration(round(now - st.missing_since)))
                resolved.append(self._alert(st, now, ends_at=now))
                st.missing_since = None
        if resolved:
            self._send(resolved, now)
        return True

    def check(self, now: float) -> list[Alert]:
        """Send (and return) a firing alert for each heartbeat missing at ``now``."""
        firing = []
        with self._lock:
            for st in self.states.values():
                since = (self.start_t if st.last is None else st.last) + st.spec.missing_after
                if now < since:
                    continue
                if st.missing_since is None:
                    st.missing_since = since
                    log.error("heartbeat %s is missing: none for %s", st.spec.name,
                              format_duration(round(now - self._heard(st))))
                firing.append(self._alert(st, now, ends_at=None))
        if firing:
            self._send(firing, now)
        return firing

    def _alert(self, st: HeartbeatState, now: float, *, ends_at: float | None) -> Alert:
        spec = st.spec
        labels = Labels({"alertname": HEARTBEAT_MISSING, "heartbeat": spec.name, "tier": "P0",
                         "severity": "critical", "dimension": "infrastructure", **spec.labels})
        if ends_at is not None:
            heard = "it arrived again"
        elif st.last is None:
            heard = "none arrived since this server started"
        else:
            heard = (f"the last arrived {format_duration(round(now - st.last))} ago ({st.received} "
                     "received since this server started)")
        annotations = {
            "summary": f"No heartbeat from {spec.name} for over {format_duration(spec.missing_after)}",
            "description": f"Expected every {format_duration(spec.expect_every)}; {heard}.",
            "runbook": f"Is {spec.name} running and can it reach this server? Check its log for heartbeat "
                       "errors (HeartbeatSendFailing there) and its alerting.heartbeat.url.",
        }
        assert st.missing_since is not None
        return Alert(labels, annotations, st.missing_since, ends_at, now - self._heard(st))

    def _heard(self, st: HeartbeatState) -> float:
        """When ``st`` was last heard from (the start, for one never heard)."""
        return self.start_t if st.last is None else st.last

    def every(self) -> float:
        """How often ``start`` checks: a tenth of the shortest ``missing_after`` (1 s to 15 s)."""
        shortest = min((s.spec.missing_after for s in self.states.values()), default=150.0)
        return min(15.0, max(1.0, shortest / 10))

    def start(self) -> None:
        """Check on a daemon thread every ``every()`` seconds until ``stop``."""
        self._thread = threading.Thread(target=self._run, name="heartbeat-watch", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self.clock.wait(self._stop, self.every()):
            try:
                self.check(self.clock.now())
            except Exception:
                log.exception("checking heartbeats failed")

    def stop(self, timeout: float = 5.0) -> None:
        """Stop checking."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
