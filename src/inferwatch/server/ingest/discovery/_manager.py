"""Discovery: each job's sources polled on their own threads, each change handed to the scrape loop.

Runs beside scraping and evaluation, never in their way: a slow HTTP SD
endpoint delays only its own next refresh. A source that fails keeps its last
good targets (never an empty list because of an error), logs why once per
change of reason, and shows in :meth:`Discovery.status` (the self-metrics).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from inferwatch.config import ScrapeJob
from inferwatch.model import Clock
from inferwatch.server.ingest.discovery._dns import DnsSource
from inferwatch.server.ingest.discovery._file import FileSource
from inferwatch.server.ingest.discovery._groups import TargetGroup, flatten
from inferwatch.server.ingest.discovery._http import HttpSource
from inferwatch.server.ingest.discovery._kube import KubernetesSource

__all__ = ["Discovery", "OnUpdate", "SourceStatus"]

log = logging.getLogger(__name__)

OnUpdate = Callable[[str, list[dict[str, str]]], None]
"""Called with a job's name and the label sets of all its targets whenever they change."""


class _Source(Protocol):
    mechanism: str
    error: str

    def poll(self, mono: float) -> list[TargetGroup] | None: ...

    def wait_s(self, mono: float) -> float: ...


class _Static:
    mechanism = "static"
    error = ""

    def __init__(self, job: ScrapeJob) -> None:
        self._groups: list[TargetGroup] | None = [
            TargetGroup(f"{i}", g.targets, dict(g.labels)) for i, g in enumerate(job.static_configs)]

    def poll(self, mono: float) -> list[TargetGroup] | None:
        out, self._groups = self._groups, None  # once: static groups never change
        return out

    def wait_s(self, mono: float) -> float:
        return 3600.0


@dataclass
class SourceStatus:
    """One source of one job: its mechanism, the reason it last failed ("" when fine), failures so far."""

    job: str
    mechanism: str
    error: str = ""
    failures: int = 0


class _Slot:
    def __init__(self, job: str, source: _Source) -> None:
        self.job, self.source = job, source
        self.groups: list[TargetGroup] = []
        self.status = SourceStatus(job, source.mechanism)


class Discovery:
    """The sources of ``jobs``; :meth:`start` polls them on threads, :meth:`refresh` once (tests)."""

    def __init__(self, jobs: Sequence[ScrapeJob], *, clock: Clock,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.clock = clock
        opts: dict[str, Any] = {"transport": transport, "follow_redirects": True}
        self._client = httpx.Client(**opts, headers={"User-Agent": "inferwatch"})
        self._slots: list[_Slot] = []
        for job in jobs:
            sources: list[_Source] = [_Static(job)] if job.static_configs else []
            sources += [FileSource(c) for c in job.file_sd_configs]
            sources += [HttpSource(c, self._client) for c in job.http_sd_configs]
            sources += [DnsSource(c) for c in job.dns_sd_configs]
            sources += [KubernetesSource(c, clock=clock, transport=transport)
                        for c in job.kubernetes_sd_configs]
            self._slots += [_Slot(job.job, s) for s in sources]
        self._job_locks = {s.job: threading.Lock() for s in self._slots}
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    @property
    def jobs(self) -> list[str]:
        """The jobs that have sources."""
        return sorted({s.job for s in self._slots})

    def status(self) -> list[SourceStatus]:
        """Every source's state."""
        return [s.status for s in self._slots]

    def refresh(self, on_update: OnUpdate) -> None:
        """Poll every source once now, handing changed jobs to ``on_update`` (tests, simulated time)."""
        for slot in self._slots:
            self._poll(slot, on_update)

    def _poll(self, slot: _Slot, on_update: OnUpdate) -> None:
        try:
            groups = slot.source.poll(self.clock.monotonic())
        except Exception:  # a background loop logs and goes on; the last targets stay
            log.exception("discovery for job %s (%s) failed unexpectedly", slot.job, slot.source.mechanism)
            return
        error = slot.source.error
        if error != slot.status.error:
            if error:
                log.warning("discovery for job %s (%s) failed, its last targets are kept: %s",
                            slot.job, slot.source.mechanism, error)
            else:
                log.info("discovery for job %s (%s) works again", slot.job, slot.source.mechanism)
        if error and groups is not None:  # a read or fetch was tried (and failed)
            slot.status.failures += 1
        slot.status.error = error
        if groups is None:
            return
        with self._job_locks[slot.job]:  # one job's updates in order, other jobs not held up
            if groups == slot.groups:
                return
            slot.groups = groups
            merged = [g for s in self._slots if s.job == slot.job for g in s.groups]
            on_update(slot.job, flatten(merged))

    def start(self, on_update: OnUpdate) -> None:
        """One thread per source until :meth:`stop`; the first poll is at once."""
        for slot in self._slots:
            if isinstance(slot.source, KubernetesSource):
                slot.source.start()  # its watches run on threads of their own
            th = threading.Thread(target=self._run, args=(slot, on_update), name=f"discover-{slot.job}",
                                  daemon=True)
            th.start()
            self._threads.append(th)

    def _run(self, slot: _Slot, on_update: OnUpdate) -> None:
        while not self._stop.is_set():
            self._poll(slot, on_update)
            self.clock.wait(self._stop, slot.source.wait_s(self.clock.monotonic()))

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the threads (each finishes its poll) and close the HTTP client."""
        self._stop.set()
        for slot in self._slots:
            if isinstance(slot.source, KubernetesSource):
                slot.source.stop(timeout)
        for th in self._threads:
            th.join(timeout)
        self._threads.clear()
        self._client.close()
