"""The demo run end to end, briefly, on compressed time: live metrics move through the phases."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from prometheus_client.metrics_core import Metric

from inferwatch.demo import FEATURES, DemoComponents, DemoContext, DemoOptions, Faults, Phase, Story, run_demo

# 4 phases of 30 story seconds, at x20: 1.5 real seconds each, 6 s in all.
STORY = Story.of(
    [
        Phase("normal", 0.0),
        Phase("latency", 30.0, Faults(latency_ms=300.0)),
        Phase("outage", 60.0, Faults(unavailable_ratio=0.6)),
        Phase("drift", 90.0, drift=1.0),
    ],
    end_s=120.0,
)


class PredictionLog:
    """An SDK aggregator keeping (story clock time, clicks_7d) of each prediction."""

    kinds = ("prediction",)

    def __init__(self) -> None:
        self.rows: list[tuple[float, float]] = []
        self.lock = threading.Lock()

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        with self.lock:
            self.rows += [(now, p[0]["clicks_7d"]) for p in payloads]

    def collect(self, now: float) -> Iterable[Metric]:
        return ()


class Part:
    """A DemoPart that records the calls it gets and shows one line per refresh."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.story_start = 0.0

    def start(self, ctx: DemoContext) -> None:
        self.calls.append("start")
        assert ctx.metrics_url.endswith("/metrics")

    def refresh(self, ctx: DemoContext, story_t: float) -> Iterable[str]:
        self.calls.append("refresh")
        self.story_start = ctx.story_start
        return [f"part saw t={story_t:.0f}"]

    def stop(self, ctx: DemoContext) -> None:
        self.calls.append("stop")


def test_demo_moves_through_the_phases() -> None:
    log, part, out = PredictionLog(), Part(), io.StringIO()
    report = run_demo(
        DemoOptions(duration_s=6.0, speed=20.0, rate=60.0, threads=8, refresh_s=0.5, story=STORY),
        DemoComponents(aggregators=[log], parts=[part]),
        out=out, tty=False,
    )
    phases = {p.name: p.stats for p in report.phases}
    assert [p.name for p in report.phases] == ["normal", "latency", "outage", "drift"]
    assert all(s.requests > 10 for s in phases.values()), phases
    # normal: healthy; latency: P99 at the injected ~300 ms; outage: ~60% 503s; drift: healthy again
    # (bounds leave room for a loaded CI host: only the injected faults can cross them)
    assert phases["normal"].error_ratio == 0.0, phases
    # every request of the latency phase waits >= 240 ms, so even its median crosses 0.2 s; a P99 of
    # the normal phase can reach 0.8 s on a runner at load 9, so the phases are not compared by it
    assert phases["latency"].p50_s >= 0.2 and phases["latency"].p99_s >= 0.2, phases
    assert 0.3 <= phases["outage"].unavailable_ratio <= 0.9, phases
    assert phases["drift"].unavailable_ratio < 0.2, phases
    # drift reaches the SDK's aggregators, stamped with compressed time
    before = [c for t, c in log.rows if t - part.story_start < 85.0]
    after = [c for t, c in log.rows if t - part.story_start >= 95.0]
    assert len(before) > 20 and len(after) > 10, (len(before), len(after))
    # +8 expected at drift 1 (2 std of clicks_7d)
    assert np.mean(after) - np.mean(before) > 4.0, (np.mean(before), np.mean(after))
    # the extension point: start once, refresh every time, stop at the end; lines shown
    assert part.calls[0] == "start" and part.calls[-1] == "stop" and part.calls.count("refresh") >= 5
    text = out.getvalue()
    assert "part saw t=" in text and "phase outage" in text and "load generator:" in text
    assert report.outcomes.get("503", 0) > 0 and "clicks_7d" in FEATURES


def test_tty_mode_redraws_a_table() -> None:
    out = io.StringIO()
    story = Story.of([Phase("normal", 0.0)], end_s=10.0)
    run_demo(DemoOptions(duration_s=1.0, speed=10.0, rate=20.0, threads=2, refresh_s=0.5, story=story),
             out=out, tty=True)
    text = out.getvalue()
    assert text.count("\x1b[H\x1b[2J") >= 2 and "QPS" in text and "phase: normal" in text
