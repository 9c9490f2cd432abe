"""The demo's notification pipeline: the alerts the embedded server sends are routed, grouped
and acted on by ``inferwatch.alerting``; its degrade action calls the demo service's
``POST /admin/degrade``. This part shows each notification and action as it happens.

The pipeline itself is built with the rest of the server by ``inferwatch.server.build``
(the ``AlertView`` part joins this part's ``alerting`` section to its config and attaches
the pipeline it got back); this part writes that section and shows what the pipeline did.

The P0 path goes over real HTTP to loopback fakes (``_fakes``): the ``phone`` receiver pages
a fake PagerDuty Events API and the ``scale_out`` action patches a fake Kubernetes API
server's Deployment ``default/demo``; the lines shown for them are what the fakes received.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterable, Mapping

from inferwatch.alerting import ActionRecord, NotificationRecord, Pipeline
from inferwatch.demo._fakes import DemoFakes
from inferwatch.demo._runner import DemoContext
from inferwatch.demo._terminal import format_clock

__all__ = ["PipelineView"]

CONFIG = """
alerting:
  actions:
    - {{name: degrade, type: degrade, url: "{url}/admin/degrade", matchers: ['alertname="SevereLatency"']}}
"""

FAKES_CONFIG = """
  receivers:
    - {{name: phone, type: pagerduty, url: "{pd_url}", routing_key: "{pd_key}"}}
"""

SCALE_ACTION = """
    - {{name: scale_out, type: kubernetes_scale, matchers: ['tier="P0"'], namespace: default,
       deployment: "{{service}}", max_replicas: {max}, api_server: "{kube_url}", token: "{token}"}}
"""
MAX_REPLICAS = 10


class PipelineView:
    """A DemoPart: writes the pipeline's config, ticks the pipeline it is given, lists what it did."""

    def __init__(self, fakes: bool = True, settings: Mapping[str, str] | None = None) -> None:
        self.pipeline: Pipeline | None = None
        self.use_fakes = fakes
        self.settings = dict(settings or {})
        """More keys of the ``alerting`` section, e.g. ``{"timezone": "Asia/Shanghai"}``."""
        self.fakes: DemoFakes | None = None
        """The PagerDuty and Kubernetes fakes (started by ``start`` when ``fakes``)."""
        self.records: list[NotificationRecord | ActionRecord] = []
        self.receiver_output = io.StringIO()
        """What the receivers wrote (terminal and no-credentials fallbacks), kept out of the view."""
        self._lock = threading.Lock()
        self._lines: list[str] = []
        self._shown = 0
        self._start = 0.0
        self._pages_shown = self._scales_shown = 0
        self.alerting_config = ""
        """The config's ``alerting`` section (YAML), written by ``start``."""

    def _record(self, rec: NotificationRecord | ActionRecord) -> None:
        t = format_clock(rec.t - self._start)
        with self._lock:
            self.records.append(rec)
            lines = self._fake_lines(rec)
            if isinstance(rec, ActionRecord) and rec.deduplicated:
                lines = []  # the run it repeats was shown; the API still lists it
            elif lines is None and isinstance(rec, ActionRecord):
                lines = [f"ACTION   {rec.action} ({rec.phase}) for {rec.alertname}: {rec.outcome}"]
            elif lines is None and isinstance(rec, NotificationRecord):
                lines = [f"NOTIFY   {rec.receiver}: {rec.kind} {rec.status} {rec.error}".rstrip()]
            self._lines += [f"[{t}] {line}" for line in lines or ()]

    def _fake_lines(self, rec: NotificationRecord | ActionRecord) -> list[str] | None:
        """What the fakes received for this record (``None``: not theirs, show the record)."""
        if self.fakes is None:
            return None
        if isinstance(rec, ActionRecord) and rec.action == "scale_out" and rec.ok:
            changes = self.fakes.kubernetes.changes[self._scales_shown:]
            self._scales_shown += len(changes)
            return [f"ACTION   scale_out for {rec.alertname}: deployment {c.deployment} replicas "
                    f"{c.before} -> {c.after} (max {MAX_REPLICAS}) -> fake Kubernetes API 200"
                    for c in changes] or None
        if isinstance(rec, NotificationRecord) and rec.receiver == "phone" and rec.status == "sent":
            events = self.fakes.pagerduty.events[self._pages_shown:]
            self._pages_shown += len(events)
            return [f"PHONE    pagerduty {e.event_action} {e.alertname} (dedup_key {e.dedup_key[:12]}…"
                    f"{', ' + e.severity if e.severity else ''}) -> fake PagerDuty {e.status}"
                    for e in events] or None
        return None

    def start(self, ctx: DemoContext) -> None:
        """Write the pipeline's config: degrade aimed at the service, P0 at the fakes (started here)."""
        settings = "".join(f"  {k}: {json.dumps(v)}\n" for k, v in self.settings.items())
        text = CONFIG.format(url=ctx.service_url).replace("alerting:\n", "alerting:\n" + settings, 1)
        if self.use_fakes:
            self.fakes = DemoFakes()
            pd, kube = self.fakes.pagerduty, self.fakes.kubernetes
            text += SCALE_ACTION.format(max=MAX_REPLICAS, kube_url=kube.url, token=kube.token)
            text += FAKES_CONFIG.format(pd_url=pd.url, pd_key=pd.routing_key)
        self.alerting_config = text
        self._start = ctx.clock.now()

    def attach(self, pipeline: Pipeline) -> None:
        """Show what ``pipeline`` (built from ``alerting_config`` with the server) does from now on."""
        self.pipeline = pipeline
        pipeline.subscribe(self._record)

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
        """Close the pipeline's state, stop the fakes."""
        if self.pipeline is not None:
            self.pipeline.close()
        if self.fakes is not None:
            self.fakes.stop()
