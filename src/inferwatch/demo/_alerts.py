"""The demo's embedded server: scrapes the demo service on compressed time, evaluates the
default rule pack and shows the alerts the evaluator sends (firing, then resolved).

The alerts are the real evaluator's; this part only displays them. The server is
built by ``inferwatch.server.build``, as ``serve`` builds it: this part sees each round
of alerts before the pipeline (the build's ``tap``). The notification pipeline's part
(routing, receivers, the degrade action) plugs in as ``forward``: its ``alerting`` section
joins the config, and the pipeline built with the server is attached to it.
"""

from __future__ import annotations

import io
import secrets
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

from inferwatch.config import Secret, parse_config
from inferwatch.demo._pipeline import PipelineView
from inferwatch.demo._runner import DemoContext
from inferwatch.demo._terminal import format_clock
from inferwatch.rules import Alert
from inferwatch.server import Embedding, Server, ServerParts, build

__all__ = ["AlertView"]

CONFIG = """
storage: {{type: memory}}
server: {{evaluation_interval: {interval}ms, external_url: "{external_url}"}}
scrape:
  targets:
    - {{job: demo, url: "{url}", interval: {interval}ms, timeout: {timeout}ms}}
"""
# `inferwatch demo --slo`: the service's objectives page instead of its static error and latency
# rules (docs/slo.md): the latency phase and the outage each page from a fast burn.
SLO_CONFIG = """
slos:
  - {service: demo, type: availability, objective: 99.9}
  - {service: demo, type: latency, objective: 99, threshold: 1.0}
rules: {slo_replaces_static: true}
"""


class AlertView:
    """A DemoPart running the embedded server against the demo service and listing its alerts."""

    def __init__(self, interval_s: float = 15.0, forward: PipelineView | None = None, keep: int = 6,
                 *, slos: bool = False) -> None:
        self.interval_s, self.forward, self.keep = interval_s, forward, keep
        self.slos = slos  # declare the demo service's SLOs (SLO_CONFIG)
        self._lock = threading.Lock()
        self._firing: dict[str, Alert] = {}
        self._log: list[str] = []
        self._shown = 0  # transitions already printed (plain mode)
        self.events: list[tuple[float, str, str]] = []
        """(story time, alertname, "firing" | "resolved") for each transition, in order."""
        self._parts: ServerParts | None = None
        self._start = 0.0
        self.drift: Callable[[], list[dict[str, Any]]] | None = None
        """The dashboard's drift view (set by the dashboard part)."""
        self.embed = Embedding(stream=io.StringIO())
        self.external_url = ""
        """Where the server's links point (the dashboard part sets its own URL: a page's
        acknowledgement link opens the demo's incident page)."""
        """What the server is built with of the demo's own (the dashboard part adds its token and
        trace store); the tap is this part."""

    @property
    def server(self) -> Server | None:
        """The embedded server (``None`` until ``start``)."""
        return self._parts.server if self._parts is not None else None

    @property
    def parts(self) -> ServerParts | None:
        """Everything ``inferwatch.server.build`` made (``None`` until ``start``)."""
        return self._parts

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        """AlertSink (the build's tap): remember transitions (evaluator thread)."""
        with self._lock:
            for a in alerts:
                key, resolved = a.fingerprint, a.resolved(now)
                if resolved and key in self._firing:
                    del self._firing[key]
                    self._note(now, a, "resolved")
                elif not resolved and key not in self._firing:
                    self._firing[key] = a
                    self._note(now, a, "firing")

    def _note(self, now: float, a: Alert, state: str) -> None:
        t = now - self._start
        self.events.append((t, a.name, state))
        tier = a.labels.get("tier", "")
        self._log.append(f"[{format_clock(t)}] {state.upper():8} {tier} {a.name}: "
                         f"{a.annotations.get('summary', '')} (value {a.value:.3g})")
        if state == "firing" and a.annotations.get("example_traces"):
            self._log.append(f"           slow traces: {a.annotations['example_traces']}")

    def start(self, ctx: DemoContext) -> None:
        """Build the server from a small config (memory store, default rules, the pipeline part's
        ``alerting`` section) with ``inferwatch.server.build``, and start it."""
        ms = round(self.interval_s * 1000)
        text = CONFIG.format(interval=ms, url=ctx.metrics_url, timeout=ms // 2,
                             external_url=self.external_url)
        text += SLO_CONFIG if self.slos else ""
        if self.forward is not None:
            text += self.forward.alerting_config
        config = parse_config(text)
        self._start = ctx.clock.now()
        clock = ctx.clock.compressed()  # one speed for scheduling and waiting
        stream = self.forward.receiver_output if self.forward is not None else self.embed.stream
        # latency alerts name example slow traces (the service's exemplars): build's trace links
        # a token of its own when none is given: the demo's memory store has no data directory,
        # and a generated one would be written into ./data of whoever runs it
        token = self.embed.token or Secret(secrets.token_urlsafe(24))
        self._parts = build(config, clock=clock, drift=self.drift,
                            embed=replace(self.embed, tap=self, stream=stream, token=token))
        if self.forward is not None:
            self.forward.attach(self._parts.pipeline)
        self._parts.server.start()

    def refresh(self, ctx: DemoContext, story_t: float) -> Iterable[str]:
        """A table: the firing alerts and the last transitions; plain lines: new transitions only."""
        self._start = ctx.story_start
        with self._lock:
            counts = Counter(f"{a.labels.get('tier', '')} {a.name}" for a in self._firing.values())
            firing = [name if n == 1 else f"{name} x{n}" for name, n in sorted(counts.items())]
            log, new = self._log[-self.keep:], self._log[self._shown:]
            self._shown = len(self._log)
        if not ctx.tty:
            return new
        return [f"alerts firing: {', '.join(firing) if firing else 'none'}", *log]

    def stop(self, ctx: DemoContext) -> None:
        """Stop the server (the pipeline part closes the pipeline; without one, this part does)."""
        if self._parts is not None:
            self._parts.server.stop()
            if self._parts.outcomes is not None:
                self._parts.outcomes.close()
            if self.forward is None:
                self._parts.pipeline.close()
