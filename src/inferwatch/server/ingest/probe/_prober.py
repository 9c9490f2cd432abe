"""The prober: each probe on its own schedule, bounded by its timeout, never overlapping itself.

One scheduler thread per probe waits on the injected clock (so ``serve --speed``
compresses probe intervals as it does scrapes); each run goes to a worker
thread that the scheduler waits for at most the probe's timeout. A run still
going at the next due time is not doubled: that turn is skipped and counted
(``inferwatch_probe_runs_total{result="skipped"}``). Samples are stamped with
the run's start, as a scrape's are.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from inferwatch._exceptions import InferwatchError
from inferwatch.config import ProbeSpec, redact_url
from inferwatch.model import Clock
from inferwatch.server.ingest.probe._golden import GoldenWindow, load_golden
from inferwatch.server.ingest.probe._http import PHASES, Exchange
from inferwatch.server.ingest.probe._run import ProbeResult, Rotation, run_probe
from inferwatch.server.ingest.probe._series import ProbeSeries, Row
from inferwatch.store import Store, append_columns

__all__ = ["ProbeStatus", "Prober"]

log = logging.getLogger(__name__)


@dataclass
class ProbeStatus:
    """What the API and the dashboard show of one probe."""

    name: str
    kind: str
    url: str
    labels: dict[str, str]
    interval: float
    timeout: float
    success: bool | None = None
    last_run: float | None = None
    duration: float = 0.0
    status_code: int = 0
    phases: dict[str, float] | None = None
    last_failure: float | None = None
    last_failure_reason: str = ""
    answer: str = ""
    canary_wrong_ratio: float | None = None
    canary_answers: list[tuple[str, str]] | None = None
    canary_evidence: str = ""
    runs: int = 0
    skipped: int = 0


class _Probe:
    def __init__(self, spec: ProbeSpec) -> None:
        self.spec = spec
        self.series = ProbeSeries(spec)
        golden = spec.golden
        self.rotation = Rotation(load_golden(golden.file), golden.cases_per_run) if golden else None
        self.window = GoldenWindow(golden.window, golden.threshold) if golden else None
        self.worker: threading.Thread | None = None
        self.lock = threading.Lock()  # one run's rows at a time (a late worker and the scheduler)
        self.status = ProbeStatus(spec.name, spec.kind, redact_url(spec.url), dict(spec.labels),
                                  spec.period, spec.timeout)


class Prober:
    """Runs the configured probes into a store on the injected clock."""

    def __init__(self, specs: Sequence[ProbeSpec], store: Store, *, clock: Clock) -> None:
        self.store, self.clock = store, clock
        self._probes = [_Probe(s) for s in specs]  # golden files read now: a bad one fails the build
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def probes(self) -> list[ProbeStatus]:
        """Every probe's status, in config order."""
        return [p.status for p in self._probes]

    def run_once(self, name: str | None = None) -> list[ProbeResult]:
        """Run every probe (or the one named) now, in this thread; what each found."""
        out = []
        for p in self._probes:
            if name is None or p.spec.name == name:
                out.append(self._run(p, self.clock.now()))
        return out

    def _run(self, probe: _Probe, now: float) -> ProbeResult:
        try:
            result = run_probe(probe.spec, probe.rotation)
        except Exception as exc:  # a background loop logs and goes on
            log.exception("probe %s failed unexpectedly", probe.spec.name)
            result = ProbeResult(False, f"internal error: {type(exc).__name__}", Exchange(), 0.0)
        self._record(probe, now, result)
        return result

    def _record(self, probe: _Probe, now: float, r: ProbeResult) -> None:
        with probe.lock:
            rows = probe.series.rows(r, probe.window)
            self._append(probe, now, rows)
            st = probe.status
            st.success, st.last_run, st.duration, st.runs = r.success, now, r.duration, st.runs + 1
            st.status_code, st.answer = r.exchange.status, r.answer
            st.phases = {p: r.exchange.phases[p] for p in PHASES}
            if not r.success:
                st.last_failure, st.last_failure_reason = now, r.reason
            if probe.window is not None:
                st.canary_wrong_ratio, st.canary_evidence = probe.window.ratio(), probe.window.evidence
                st.canary_answers = list(r.answers)

    def _append(self, probe: _Probe, now: float, rows: list[Row]) -> None:
        try:
            append_columns(self.store, [ls for ls, _ in rows], [now] * len(rows), [v for _, v in rows])
        except InferwatchError as exc:
            log.error("probe %s: the store refused its samples: %s", probe.spec.name, exc)

    # -- threads ----------------------------------------------------------------
    def start(self) -> None:
        """One scheduler thread per probe until :meth:`stop`."""
        for p in self._probes:
            th = threading.Thread(target=self._schedule, args=(p,), name=f"probe-{p.spec.name}",
                                  daemon=True)
            th.start()
            self._threads.append(th)

    def _schedule(self, probe: _Probe) -> None:
        due = self.clock.monotonic()
        while not self._stop.is_set():
            self._turn(probe)
            due += probe.spec.period
            mono = self.clock.monotonic()
            if due <= mono:  # turns missed: keep the pace
                due = mono + probe.spec.period
            self.clock.wait(self._stop, due - mono)

    def _turn(self, probe: _Probe) -> None:
        """Start a run unless the last one is still going (then count a skip); wait up to its timeout."""
        if probe.worker is not None and probe.worker.is_alive():
            with probe.lock:
                probe.status.skipped += 1
                self._append(probe, self.clock.now(), probe.series.skipped())
            return
        now = self.clock.now()
        probe.worker = threading.Thread(target=self._run, args=(probe, now), daemon=True,
                                        name=f"probe-run-{probe.spec.name}")
        probe.worker.start()
        probe.worker.join(probe.spec.timeout + 1.0)  # the run bounds itself; this bounds a stuck one

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the scheduler threads (joined with ``timeout``)."""
        self._stop.set()
        for th in self._threads:
            th.join(timeout)
        self._threads.clear()
