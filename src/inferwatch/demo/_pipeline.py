"""The demo's notification pipeline: the alerts the embedded server sends are routed, grouped
and acted on by ``inferwatch.alerting``; its degrade action calls the demo service's
``POST /admin/degrade``. This part shows each notification and action as it happens.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Iterable, Sequence

from inferwatch.alerting import ActionRecord, NotificationRecord, Pipeline, pipeline_from_config
from inferwatch.config import parse_config
from inferwatch.demo._runner import DemoContext
from inferwatch.demo._terminal import format_clock
from inferwatch.rules import Alert

__all__ = ["PipelineView"]

CONFIG = """
alerting:
  actions:
    - {{name: degrade, type: degrade, url: "{url}/admin/degrade", matchers: ['alertname="SevereLatency"']}}
"""


class PipelineView:
    """A DemoPart and an AlertSink: feeds alerts to the pipeline, ticks it, lists what it did."""

    def __init__(self) -> None:
        self.pipeline: Pipeline | None = None
        self.records: list[NotificationRecord | ActionRecord] = []
        self.receiver_output = io.StringIO()
        """What the receivers wrote (terminal and no-credentials fallbacks), kept out of the view."""
        self._lock = threading.Lock()
        self._lines: list[str] = []
        self._shown = 0
        self._start = 0.0

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        """AlertSink: hand the evaluator's alerts to the pipeline."""
        if self.pipeline is not None:
            self.pipeline.send(alerts, now)

    def _record(self, rec: NotificationRecord | ActionRecord) -> None:
        t = format_clock(rec.t - self._start)
        if isinstance(rec, ActionRecord):
            line = f"[{t}] ACTION   {rec.action} ({rec.phase}) for {rec.alertname}: {rec.outcome}"
        else:
            line = f"[{t}] NOTIFY   {rec.receiver}: {rec.kind} {rec.status} {rec.error}".rstrip()
        with self._lock:
            self.records.append(rec)
            self._lines.append(line)

    def start(self, ctx: DemoContext) -> None:
        """Build the pipeline (state in memory) with the degrade action aimed at the service."""
        config = parse_config(CONFIG.format(url=ctx.service_url))
        self._start = ctx.clock.now()
        self.pipeline = pipeline_from_config(config, None, ctx.clock, stream=self.receiver_output)
        self.pipeline.subscribe(self._record)

    def refresh(self, ctx: DemoContext, story_t: float) -> Iterable[str]:
        """Tick the pipeline (group waits, repeats on compressed time); new lines, or the last few."""
        self._start = ctx.story_start
        if self.pipeline is not None:
            self.pipeline.tick(ctx.clock.now())
        with self._lock:
            new, last = self._lines[self._shown:], self._lines[-6:]
            self._shown = len(self._lines)
        return last if ctx.tty else new

    def stop(self, ctx: DemoContext) -> None:
        """Close the pipeline's state."""
        if self.pipeline is not None:
            self.pipeline.close()
