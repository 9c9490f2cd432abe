"""The demo runner: service + load generator + story on compressed time, live view, extension points.

Extension point: a ``DemoComponents`` carries SDK aggregators (attached to the
demo service's ``Monitor``: drift, confidence, business) and ``DemoPart``s,
each told ``start(ctx)`` once the service is up, ``refresh(ctx, story_t)`` on
every refresh (the lines it returns are shown under the live table: alerts as
they fire, PSI values) and ``stop(ctx)`` at the end. The embedded server,
the alerting pipeline and the quality monitors plug in there; the runner
itself knows none of them.
"""

from __future__ import annotations

import logging
import math
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TextIO

import numpy as np

from inferwatch.demo._features import FEATURE_STORE_SERVICE, FeatureStore
from inferwatch.demo._live import LiveStats, Snapshot
from inferwatch.demo._loadgen import LoadGenerator
from inferwatch.demo._model import FeatureGenerator, LogisticModel, train_model
from inferwatch.demo._onnx_model import NUMPY_NOTE, onnx_model
from inferwatch.demo._serve import ServerThread
from inferwatch.demo._service import DemoService
from inferwatch.demo._story import DEFAULT_STORY, Phase, Story
from inferwatch.demo._terminal import Display, format_clock
from inferwatch.model import ScaledClock
from inferwatch.sdk import Aggregator, Monitor

if TYPE_CHECKING:
    from inferwatch.tracing import Tracing

__all__ = ["DemoClock", "DemoComponents", "DemoContext", "DemoOptions", "DemoPart", "DemoReport",
           "PhaseStats", "run_demo"]

log = logging.getLogger("inferwatch.demo")

ROUTE = "/predict"
CLIENT_SERVICE = "demo-client"
"""The load generator's ``service.name``: its CLIENT spans are the demo traces' roots."""
FIRST_ANSWER_S = 30.0
"""How long the story waits for the service's first answer before it starts anyway (real seconds)."""


class DemoClock(ScaledClock):
    """Compressed wall time for timestamps and waits, real ``monotonic`` for request durations.

    Latency injected into the service is real, so the SDK must time it on the
    real clock; aggregators, scrapes and rules see compressed time through ``now``.
    """

    def monotonic(self) -> float:
        """Real monotonic seconds (durations are not compressed)."""
        return time.monotonic()

    def compressed(self) -> ScaledClock:
        """The same compressed time, monotonic reading compressed too: the server's loops schedule
        with ``monotonic`` and wait with ``wait``, so both must run at one speed."""
        clock = ScaledClock(self.speed, start=self._sim0)
        clock._real0 = self._real0
        return clock


@dataclass(frozen=True)
class DemoOptions:
    """How long, how fast, where and how much load."""

    duration_s: float = 90.0
    speed: float | None = None  # None: fit the whole story into duration_s
    port: int = 0
    rate: float = 40.0
    threads: int = 32
    refresh_s: float = 1.0
    window_refreshes: int = 3
    seed: int | None = None
    story: Story = DEFAULT_STORY
    traces_url: str | None = None
    """OTLP/HTTP base URL the three services (client, model service, feature store) export traces to."""
    trace_ratio: float = 0.05
    """Fraction of the fast, successful traces kept (slow and failed ones always are)."""

    def effective_speed(self) -> float:
        """The given speed, or story length / duration."""
        return self.speed if self.speed else self.story.end_s / self.duration_s


@dataclass
class DemoContext:
    """What components may use: the clocks, the story, the service, its monitor and URLs."""

    clock: DemoClock
    story: Story
    service: DemoService
    monitor: Monitor
    features: FeatureGenerator
    service_url: str
    metrics_url: str
    story_start: float = 0.0
    tty: bool = False
    """Whether the view redraws a table (parts then show state) or prints lines (show changes)."""

    def story_time(self) -> float:
        """Story seconds since the start."""
        return self.clock.now() - self.story_start


class DemoPart(Protocol):
    """Something that runs alongside the demo (embedded server, alert view, drift view)."""

    def start(self, ctx: DemoContext) -> None:
        """Called once the service listens, before load starts."""
        ...

    def refresh(self, ctx: DemoContext, story_t: float) -> Iterable[str]:
        """Called every refresh; returned lines are shown under the live table."""
        ...

    def stop(self, ctx: DemoContext) -> None:
        """Called at the end (also after Ctrl-C)."""
        ...


@dataclass
class DemoComponents:
    """The demo's extension points (see the module docstring)."""

    aggregators: list[Aggregator] = field(default_factory=list)
    parts: list[DemoPart] = field(default_factory=list)
    model: LogisticModel | None = None
    """The model to serve (None: trained at start); given when aggregators were fitted on it."""


@dataclass(frozen=True)
class PhaseStats:
    """What the service did during one phase (its part that ran)."""

    name: str
    start_s: float
    stats: LiveStats


@dataclass
class DemoReport:
    """The outcome of a run: per-phase statistics and what the load generator saw."""

    speed: float
    service_url: str
    phases: list[PhaseStats] = field(default_factory=list)
    outcomes: dict[str, int] = field(default_factory=dict)


def run_demo(
    opts: DemoOptions, components: DemoComponents | None = None, *, out: TextIO | None = None,
    tty: bool | None = None, stop: threading.Event | None = None,
) -> DemoReport:
    """Run the story for ``opts.duration_s`` real seconds (or until ``stop`` is set); return what happened."""
    comps = components or DemoComponents()
    out = out if out is not None else sys.stdout
    speed = opts.effective_speed()
    # Compressed time starts on a whole hour, so windows that tile the hour (drift, rate
    # windows) start with the story instead of a first partial window of a few rows.
    clock = DemoClock(speed, start=math.floor(time.time() / 3600.0) * 3600.0)
    seeds = np.random.SeedSequence(opts.seed).spawn(3)
    features = FeatureGenerator(np.random.default_rng(seeds[0]))
    model = comps.model or train_model(FeatureGenerator(np.random.default_rng(seeds[1])))
    tracings = _tracings(opts)
    store_monitor = Monitor(FEATURE_STORE_SERVICE, clock=clock,
                            tracing=tracings.get(FEATURE_STORE_SERVICE, False))
    monitor = Monitor("demo", "ctr-logreg", "v1", clock=clock, aggregators=comps.aggregators,
                      tracing=tracings.get("demo", False))
    served = onnx_model(model, monitor)  # the model on ONNX Runtime (None: the onnx extra is missing)
    service = DemoService(served or model, monitor, np.random.default_rng(seeds[2]))
    # the feature store on a port of its own, served by the service's event loop: a real HTTP hop
    server = ServerThread(service.app, port=opts.port, companions=[FeatureStore(store_monitor).app])
    service.use_feature_store(server.companion_urls[0])
    server.start()
    ctx = DemoContext(clock, opts.story, service, monitor, features, server.url, server.url + "/metrics")
    ctx.tty = out.isatty() if tty is None else tty
    display = Display(out, tty=ctx.tty,
                      header=f"inferwatch demo: {server.url}/predict  (x{speed:g} compressed time, "
                             f"metrics at {ctx.metrics_url})")
    report = DemoReport(speed, server.url)
    load = LoadGenerator(server.url + ROUTE, features, rate=opts.rate, threads=opts.threads,
                         tracing=tracings.get(CLIENT_SERVICE))
    started: list[DemoPart] = []
    try:
        if served is None:
            display.message(NUMPY_NOTE)
        display.message(f"inferwatch demo: model service on {server.url}, {opts.rate:g} req/s, "
                        f"story of {format_clock(opts.story.end_s)} at x{speed:g} "
                        f"in {opts.duration_s:g} s")
        for part in comps.parts:
            part.start(ctx)
            started.append(part)
        load.start()  # starting its threads can take a while on a busy machine: the story starts after
        # the service's first answer (a cold model or a loaded host must not eat the first phase)
        load.wait_answered(FIRST_ANSWER_S)
        ctx.story_start = clock.now()
        _loop(opts, ctx, display, report, started, stop or threading.Event())
    finally:
        load.stop()
        report.outcomes = load.outcomes()
        # No requests from here on: flush and stop the exporters while their collector (the
        # dashboard part) still listens, so no export error is logged after the summary.
        for tracing in tracings.values():
            tracing.shutdown()
        for part in reversed(started):
            _safely(part.stop, ctx)
        service.close()
        server.stop()
        monitor.close()
        store_monitor.close()
    _summary(display, report)
    return report


def _tracings(opts: DemoOptions) -> dict[str, Tracing]:
    """One tracing pipeline per demo service (each its own ``service.name``), when traces are wanted."""
    if not opts.traces_url:
        return {}
    from inferwatch.tracing import setup

    return {name: setup(name, endpoint=opts.traces_url, sample_ratio=opts.trace_ratio, install_global=False)
            for name in (CLIENT_SERVICE, "demo", FEATURE_STORE_SERVICE)}


def _loop(
    opts: DemoOptions, ctx: DemoContext, display: Display, report: DemoReport, parts: list[DemoPart],
    stop: threading.Event,
) -> None:
    t_end = time.monotonic() + opts.duration_s
    current: tuple[Phase, Snapshot] | None = None
    recent: deque[Snapshot] = deque(maxlen=opts.window_refreshes + 1)
    while True:
        story_t = ctx.story_time()
        snap = Snapshot.parse(ctx.monitor.metrics_text(), ROUTE, time.monotonic())
        phase = ctx.story.phase_at(story_t)
        if current is None or phase is not current[0]:
            if current is not None:
                report.phases.append(PhaseStats(current[0].name, current[0].start_s,
                                                LiveStats.between(current[1], snap)))
            _apply(ctx, phase)
            if not display.tty:
                display.message(f"--- {format_clock(phase.start_s)} phase {phase.name}: {phase.note}")
            current = (phase, snap)
        recent.append(snap)
        stats = LiveStats.between(recent[0], snap)
        extra = _refresh_parts(parts, ctx, story_t)
        display.show(story_t, ctx.story.end_s, phase, stats, ctx.service.degraded, extra)
        left = t_end - time.monotonic()
        if stop.is_set():
            break
        if left <= 0:
            # a phase that began during this (slow) refresh is still shown before the end
            if ctx.story.phase_at(ctx.story_time()) is phase:
                break
            continue
        stop.wait(min(opts.refresh_s, left, _until_next_phase(ctx) + 0.001))
    report.phases.append(PhaseStats(current[0].name, current[0].start_s, LiveStats.between(current[1], snap)))


def _until_next_phase(ctx: DemoContext) -> float:
    """Real seconds until the next phase starts (so a short phase is never skipped)."""
    t = ctx.story_time()
    later = [p.start_s for p in ctx.story.phases if p.start_s > t]
    return (min(later) - t) / ctx.clock.speed if later else float("inf")


def _apply(ctx: DemoContext, phase: Phase) -> None:
    ctx.service.set_faults(phase.faults)
    ctx.features.drift, ctx.features.spread = phase.drift, phase.spread
    if phase.degrade is not None:
        ctx.service.set_degraded(phase.degrade)
    if phase.accelerator is not None:
        ctx.service.set_accelerator(phase.accelerator)


def _refresh_parts(parts: Sequence[DemoPart], ctx: DemoContext, story_t: float) -> list[str]:
    out: list[str] = []
    for part in parts:
        try:
            out.extend(part.refresh(ctx, story_t))
        except Exception:
            log.exception("demo: %r failed to refresh; continuing", part)
    return out


def _safely(fn: Callable[[DemoContext], None], ctx: DemoContext) -> None:
    try:
        fn(ctx)
    except Exception:
        log.exception("demo: stopping a component failed; continuing")


def _summary(display: Display, report: DemoReport) -> None:
    display.message("\nphase      requests     QPS       P99   errors     503s")
    for p in report.phases:
        s = p.stats
        if not s.requests:
            display.message(f"{p.name:<9} {0:9d} {0.0:7.1f} {'-':>9} {'-':>8} {'-':>8}")
            continue
        display.message(f"{p.name:<9} {s.requests:9.0f} {s.qps:7.1f} {s.p99_s * 1000:6.0f} ms "
                        f"{100 * s.error_ratio:7.1f}% {100 * s.unavailable_ratio:7.1f}%")
    sent = sum(report.outcomes.values())
    outcomes = dict(sorted(report.outcomes.items()))
    display.message(f"load generator: {sent} requests sent, by outcome {outcomes}")
