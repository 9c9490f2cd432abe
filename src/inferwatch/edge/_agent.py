"""The edge agent: collect -> deadband -> durable spool -> uploader, on an injected clock.

>>> import tempfile, pathlib
>>> from inferwatch.edge import Agent, AgentConfig, SpoolConfig
>>> from inferwatch.model import SimulatedClock
>>> cfg = AgentConfig("cam-1", spool=SpoolConfig(pathlib.Path(tempfile.mkdtemp()) / "s.sqlite"))
>>> agent = Agent(cfg, clock=SimulatedClock(1_700_000_000.0), sources=[])
>>> agent.collect_once()  # no sources: the agent's own series (backlog, heartbeat, drops, sent, held)
5
>>> agent.close()
'5 samples stay spooled for the next start'
"""

from __future__ import annotations

import dataclasses
import logging
import random
import threading
from collections.abc import Callable, Sequence

from inferwatch.edge._config import AgentConfig, SourceConfig
from inferwatch.edge._deadband import Deadband
from inferwatch.edge._remote_config import RemoteConfig
from inferwatch.edge._sources import CollectorSource, PushSource, ScrapeSource, Source
from inferwatch.edge._spool import DROP_REASONS, Spool
from inferwatch.edge._targets import IngestTarget, RemoteWriteTarget
from inferwatch.edge._uploader import Backoff, Target, Uploader
from inferwatch.model import Clock, Labels, MetricKind, MetricSpec, Sample, SystemClock
from inferwatch.model import metrics as m

__all__ = ["Agent", "build_sources", "build_target"]

log = logging.getLogger(__name__)


def sample(spec: MetricSpec, now: float, value: float, labels: dict[str, str] | None = None) -> Sample:
    """One of the agent's own samples (``inferwatch.collect.sample`` without importing psutil)."""
    return Sample(Labels({**(labels or {}), "__name__": spec.name}), now, float(value))


def build_sources(specs: Sequence[SourceConfig]) -> list[Source]:
    """The sources a config names (the GPU one reports ``inferwatch_gpu_collector_up 0`` without NVML)."""
    out: list[Source] = []
    for spec in specs:
        if spec.type == "host":
            from inferwatch.collect import HostCollector

            out.append(CollectorSource(HostCollector(), spec.interval))
        elif spec.type == "gpu":
            from inferwatch.collect import GpuCollector

            out.append(CollectorSource(GpuCollector(), spec.interval))
        elif spec.type == "scrape":
            out.append(ScrapeSource(spec.url, spec.interval))
        else:
            out.append(PushSource(spec.listen, spec.interval))
    return out


def build_target(cfg: AgentConfig) -> Target:
    """The upload target of ``cfg``."""
    up = cfg.upload
    if up.type == "remote_write":
        return RemoteWriteTarget(up.url, cfg.device, up.token, timeout=up.timeout)
    return IngestTarget(up.url, cfg.device, up.token or "", cfg.deadband.heartbeat, timeout=up.timeout,
                        version=up.format)


class Agent:
    """One device's agent: :meth:`start` starts its threads; :meth:`collect_once` one round."""

    def __init__(self, cfg: AgentConfig, *, clock: Clock | None = None,
                 sources: Sequence[Source] | None = None,
                 target: Target | None = None, rng: random.Random | None = None,
                 on_event: Callable[[str], None] | None = None) -> None:
        self.cfg, self.clock = cfg, clock or SystemClock()
        self.sources = list(build_sources(cfg.sources) if sources is None else sources)
        target = target or build_target(cfg)
        settings = cfg.deadband
        if isinstance(target, IngestTarget) and target.version == 3:  # the kinds and the step go along
            target.step = min((s.interval for s in self.sources), default=0.0)
            target.heartbeat_max = settings.heartbeat_max
        else:  # Prometheus (remote-write) or an older server: no one holds a quiet series, no back-off
            settings = dataclasses.replace(settings, heartbeat_max=settings.heartbeat)
        self.deadband = Deadband(settings, fixed=frozenset({m.EDGE_HEARTBEAT_SECONDS.name}))
        if isinstance(target, IngestTarget):
            target.kinds = self.deadband.kinds
            target.labels, target.clock = dict(cfg.labels), self.clock
        self.spool = Spool(cfg.spool.path, max_age=cfg.spool.max_age, max_bytes=cfg.spool.max_bytes)
        self.uploader = Uploader(
            self.spool, target, clock=self.clock, batch_size=cfg.upload.batch_size,
            flush_interval=cfg.upload.interval, rng=rng,
            backoff=Backoff(cfg.upload.backoff_base, cfg.upload.backoff_cap), on_event=on_event,
        )
        remote = isinstance(target, IngestTarget) and cfg.upload.config_poll > 0
        self.remote = RemoteConfig(cfg) if remote else None
        self._config_due = 0.0
        self.read = self.sent = 0
        self._due = {id(s): 0.0 for s in self.sources}
        self._self_due = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _own_series(self, now: float) -> list[Sample]:
        dropped = self.spool.dropped()
        out = [sample(m.EDGE_SPOOL_BACKLOG, now, self.spool.backlog()),
               sample(m.EDGE_HEARTBEAT_SECONDS, now, self.cfg.deadband.heartbeat)]
        out += [sample(m.EDGE_SPOOL_DROPPED_TOTAL, now, dropped[r], {"reason": r}) for r in DROP_REASONS[:1]]
        out += [sample(m.EDGE_SPOOL_DROPPED_TOTAL, now, dropped[r], {"reason": r}) for r in DROP_REASONS[1:]
                if dropped[r]]
        out += [sample(m.EDGE_DEADBAND_SAMPLES_TOTAL, now, self.sent, {"outcome": "sent"}),
                sample(m.EDGE_DEADBAND_SAMPLES_TOTAL, now, self.read - self.sent, {"outcome": "held"})]
        return out

    def collect_once(self, *, force: bool = True) -> int:
        """Read every due source (all with ``force``), filter, spool; returns samples spooled."""
        now = self.clock.now()
        batch: list[Sample] = []
        for src in self.sources:
            if force or now >= self._due[id(src)]:
                self._due[id(src)] = now + src.interval
                self.deadband.kinds.update(src.kinds)
                batch.extend(src.read(now))
        if force or now >= self._self_due:
            self._self_due = now + min(60.0, self.cfg.deadband.heartbeat)
            self.deadband.kinds.update({m.EDGE_SPOOL_DROPPED_TOTAL.name: MetricKind.COUNTER,
                                        m.EDGE_DEADBAND_SAMPLES_TOTAL.name: MetricKind.COUNTER})
            batch.extend(self._own_series(now))
        out = self.deadband.offer_all(batch)
        self.read += len(batch)
        self.sent += len(out)
        if not out:
            self.spool.enforce(now)
            return 0
        return self.spool.append(out, now=now)

    def poll_config(self) -> bool:
        """Ask the server for this device's configuration; apply a new valid one (see ``_remote_config``).

        Returns whether one was applied; a refused one is reported with every batch."""
        if self.remote is None:
            return False
        self._config_due = self.clock.now() + self.cfg.upload.config_poll
        got = self.remote.poll()
        target = self.uploader.target
        if got is not None:
            self.apply(got.config)
            self.remote.done(got)
        if isinstance(target, IngestTarget):
            target.config_hash, target.config_error = self.remote.applied, self.remote.error
        return got is not None

    def apply(self, cfg: AgentConfig) -> None:
        """Use ``cfg``'s deadband, batch size, upload interval and labels from now on (no restart)."""
        target = self.uploader.target
        settings = cfg.deadband
        if not (isinstance(target, IngestTarget) and target.version == 3):
            settings = dataclasses.replace(settings, heartbeat_max=settings.heartbeat)
        elif isinstance(target, IngestTarget):
            target.heartbeat_max = settings.heartbeat_max
        self.deadband.settings = settings
        self.uploader.batch_size, self.uploader.flush_interval = cfg.upload.batch_size, cfg.upload.interval
        if isinstance(target, IngestTarget):
            target.labels, target.heartbeat_s = dict(cfg.labels), settings.heartbeat
        self.cfg = cfg

    def next_due(self) -> float:
        """When the next source is due (clock time)."""
        return min([*self._due.values(), self._self_due, *([self._config_due] if self.remote else [])])

    def start(self) -> None:
        """Collect now and on each source's interval; upload on another thread."""
        self._stop.clear()
        self.uploader.start()
        self._thread = threading.Thread(target=self._run, name="inferwatch-edge-collect", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        force = True
        while not self._stop.is_set():
            try:
                self.collect_once(force=force)
                if self.remote is not None and self.clock.now() >= self._config_due:
                    self.poll_config()
            except Exception:
                log.exception("edge collection round failed; going on")
            force = False
            if self.clock.wait(self._stop, max(0.0, self.next_due() - self.clock.now())):
                return

    def stop(self) -> bool:
        """Stop both threads (what is spooled stays spooled); whether an upload is still in flight."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
            self._thread = None
        return self.uploader.stop()

    def close(self) -> str:
        """Stop (an upload in flight finishes first), close the sources, the target and the spool;
        return what stays for the next start, in words."""
        in_flight = self.stop()
        left = f"{self.spool.backlog()} samples stay spooled for the next start"
        if in_flight:
            left += "; an upload still unanswered is sent again then, under the same batch id"
        for src in self.sources:
            if isinstance(src, PushSource):
                src.close()
        close = getattr(self.uploader.target, "close", None)
        if close is not None:
            close()
        if self.remote is not None:
            self.remote.close()
        self.spool.close()
        return left
