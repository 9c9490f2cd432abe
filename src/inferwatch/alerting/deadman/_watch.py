"""Serving as the dead man's switch: ``heartbeats`` this server expects, and the page when one stops.

Each configured heartbeat is expected every ``expect_every``; when none has arrived for
``missing_after`` (counted from the server's start for one never heard), a firing
``HeartbeatMissing{heartbeat="NAME"}`` goes into the pipeline, so it is routed, grouped,
silenced and escalated like any alert: one message, then one resolved message when a
heartbeat arrives again. Last-seen times live in memory: after a restart every heartbeat
gets ``missing_after`` of grace again. In an HA pair they are shared too (``shared``, the
pair's database): a heartbeat that reached either replica counts on both, so the follower
does not page ``HeartbeatMissing`` because the pings went to the leader.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from inferwatch._exceptions import StoreError
from inferwatch.alerting._state import StateStore
from inferwatch.model import Clock, Labels, format_duration
from inferwatch.rules import Alert
from inferwatch.settings import HeartbeatWatchSpec

__all__ = ["HEARTBEAT_MISSING", "HeartbeatState", "HeartbeatWatch"]

log = logging.getLogger(__name__)
HEARTBEAT_MISSING = "HeartbeatMissing"
_KEY = "heartbeat:"  # + name: the last time either replica heard it (the shared ``meta`` table)


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

    >>> from inferwatch.settings import HeartbeatWatchSpec
    >>> from inferwatch.model import SimulatedClock
    >>> sent = []
    >>> w = HeartbeatWatch([HeartbeatWatchSpec(name="b", expect_every=60, missing_after=180)],
    ...                    SimulatedClock(0.0), lambda alerts, now: sent.extend(alerts))
    >>> w.beat("b", 10.0), w.check(100.0), w.check(191.0)[0].labels["alertname"]
    (True, [], 'HeartbeatMissing')
    """

    def __init__(self, specs: Sequence[HeartbeatWatchSpec], clock: Clock,
                 send: Callable[[Sequence[Alert], float], None], start: float | None = None,
                 shared: StateStore | None = None) -> None:
        """``shared``: an HA pair's database, where both replicas keep the last-seen times."""
        self.clock, self._send, self._shared = clock, send, shared
        self.start_t = clock.now() if start is None else start
        self.states = {s.name: HeartbeatState(s) for s in specs}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def beat(self, name: str, now: float) -> bool:
        """One heartbeat from ``name`` (``False``: no such heartbeat is configured)."""
        with self._lock:
            st = self.states.get(name)
            if st is None:
                return False
            st.received += 1
            resolved = self._heard_at(st, now, now)
        if self._shared is not None:
            try:
                with self._shared.transaction() as c:
                    c.execute("INSERT OR REPLACE INTO meta VALUES (?,?)", (_KEY + name, repr(now)))
            except StoreError as exc:  # the beat counts here; the peer learns of the next one
                log.warning("heartbeat %s: cannot share its time: %s", name, exc)
        if resolved:
            self._send(resolved, now)
        return True

    def _heard_at(self, st: HeartbeatState, t: float, now: float) -> list[Alert]:
        """``st`` was heard at ``t``: its resolved alert when it was missing (under the lock)."""
        if st.last is not None and t <= st.last:
            return []
        st.last = t
        if st.missing_since is None:
            return []
        log.warning("heartbeat %s is back after %s", st.spec.name,
                    format_duration(round(now - st.missing_since)))
        resolved = [self._alert(st, now, ends_at=now)]
        st.missing_since = None
        return resolved

    def _learn(self, now: float) -> list[Alert]:
        """What the peer heard (an HA pair): newer last-seen times from the shared database."""
        if self._shared is None:
            return []
        try:
            rows = self._shared.query("SELECT key, value FROM meta WHERE key LIKE ?", (_KEY + "%",))
        except StoreError as exc:
            log.warning("heartbeats: cannot read the peer's times: %s", exc)
            return []
        resolved: list[Alert] = []
        with self._lock:
            for key, value in rows:
                st = self.states.get(str(key).removeprefix(_KEY))
                if st is not None:
                    resolved += self._heard_at(st, float(str(value)), now)
        return resolved

    def check(self, now: float) -> list[Alert]:
        """Send (and return) a firing alert for each heartbeat missing at ``now``."""
        resolved = self._learn(now)
        if resolved:
            self._send(resolved, now)
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
