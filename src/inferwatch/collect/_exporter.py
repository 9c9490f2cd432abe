"""The exporter: host, process and GPU collectors on a timer, served on /metrics."""

from __future__ import annotations

import logging
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import start_http_server

from inferwatch._exceptions import InputError
from inferwatch.collect._base import Collector
from inferwatch.collect._exposition import SampleCollector
from inferwatch.collect._gpu import GpuCollector
from inferwatch.collect._host import HostCollector
from inferwatch.collect._loop import CollectLoop
from inferwatch.collect._process import GcStats, ProcessCollector
from inferwatch.model import Clock

__all__ = ["Exporter"]

_log = logging.getLogger(__name__)


class Exporter:
    """Collect every ``interval`` seconds and serve the latest batch over HTTP.

    ``pid`` is the model-server process to watch (default: this process, with
    its GC statistics); ``nvml`` is injected for tests (a ``FakeNVML``);
    ``gpu=False`` leaves the GPU collector out (``collect.gpu: false``).

    >>> exp = Exporter(interval=15.0)
    >>> port = exp.serve("127.0.0.1", 0)
    >>> port > 0
    True
    >>> exp.close()
    """

    def __init__(
        self, *, interval: float, pid: int | None = None, nvml: Any = None, gpu: bool = True,
        clock: Clock | None = None,
    ) -> None:
        import psutil

        self.gc_stats = GcStats() if pid is None else None
        try:
            process = ProcessCollector(pid, gc_stats=self.gc_stats)
        except psutil.NoSuchProcess as exc:
            raise InputError(f"--pid {pid}: no such process") from exc
        self.gpu = GpuCollector(nvml=nvml) if gpu else None
        collectors: list[Collector] = [HostCollector(), process]
        if self.gpu is not None:
            collectors.append(self.gpu)
        self.loop = CollectLoop(collectors, interval=interval, clock=clock)
        self.registry = CollectorRegistry()
        self.registry.register(SampleCollector(self.loop.snapshot))
        self._server: Any = None

    def serve(self, host: str, port: int) -> int:
        """Start collecting and serving; returns the bound port (``port=0`` picks a free one)."""
        if self.gc_stats is not None:
            self.gc_stats.install()
        self.loop.start()
        try:
            self._server, _thread = start_http_server(port, addr=host, registry=self.registry)
        except OSError as exc:
            self.close()
            raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
        return int(self._server.server_port)

    def close(self) -> None:
        """Stop serving and collecting (idempotent)."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        self.loop.stop()
        if self.gpu is not None:
            self.gpu.close()
        if self.gc_stats is not None:
            self.gc_stats.uninstall()
