"""The exporter: host, process and GPU collectors on a timer, served on /metrics."""

from __future__ import annotations

import logging
import os
import sys
import threading
from typing import Any

from inferwatch._exceptions import InputError
from inferwatch.collect._base import Collector
from inferwatch.collect._gpu import GpuCollector
from inferwatch.collect._host import HostCollector
from inferwatch.collect._http import MetricsServer
from inferwatch.collect._loop import CollectLoop
from inferwatch.collect._process import GcStats, ProcessCollector
from inferwatch.collect._text import render
from inferwatch.model import Clock

__all__ = ["Exporter", "replace_process", "run_exporter"]

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
        self._server: MetricsServer | None = None

    def serve(self, host: str, port: int) -> int:
        """Start collecting and serving; returns the bound port (``port=0`` picks a free one)."""
        if self.gc_stats is not None:
            self.gc_stats.install()
        self.loop.start()
        try:
            # its own small server and text writer: no prometheus-client, no http.server (RSS)
            self._server = MetricsServer((host, port), lambda: render(self.loop.snapshot()))
        except OSError as exc:
            self.close()
            raise InputError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
        threading.Thread(target=self._server.serve_forever, name="exporter-http", daemon=True).start()
        return self._server.server_port

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


def run_exporter(
    *, interval: float, pid: int | None, gpu: bool, host: str, port: int, stop: Any,
) -> int:
    """Serve until ``stop`` (a :class:`~inferwatch.model.StopRequest`); what ``inferwatch exporter`` runs.

    Prints the listening line on stdout and ``SIGNAL: stopping`` on stderr, as every
    long-running verb does.
    """
    from inferwatch.model import wait_for_stop

    exporter = Exporter(interval=interval, pid=pid, gpu=gpu)
    bound = exporter.serve(host, port)
    g = exporter.gpu
    state = "disabled (collect.gpu: false)" if g is None else (
        f"on, GPM profiling metrics on {g.gpm_gpus} GPU(s)" if g.up else f"off ({g.reason})")
    print(f"inferwatch exporter: http://{host}:{bound}/metrics "
          f"(every {interval:g}s; GPU collector {state})", flush=True)
    try:
        why = wait_for_stop(stop)  # SIGTERM (systemd, Docker, Kubernetes) or SIGINT: the same stop
        print(f"inferwatch exporter: {why}: stopping", file=sys.stderr, flush=True)
    finally:
        exporter.close()
    return 0


def replace_process(
    *, interval: float, pid: int | None, gpu: bool, host: str, port: int, verbose: bool,
) -> None:
    """Become ``python -m inferwatch.collect`` (same pid): the exporter without the CLI's imports.

    The command line has loaded and checked the whole configuration (pydantic, every
    verb's parser: ~30 MiB that stay resident once imported); ``execv`` drops them. A stop
    signal arriving meanwhile stays pending (blocked across ``execv``) until the new
    image has its handlers installed, so a SIGTERM during start-up is still a clean stop.
    """
    argv = [sys.executable, "-m", "inferwatch.collect", "--interval", repr(float(interval)),
            "--host", host, "--port", str(port)]
    if pid is not None:
        argv += ["--pid", str(pid)]
    if not gpu:
        argv.append("--no-gpu")
    if verbose:
        argv.append("--verbose")
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, argv)
