"""Running the whole server in this process: what ``build`` made, its threads, uvicorn."""

from __future__ import annotations

import gc
import logging
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from types import FrameType
from typing import Any

from inferwatch._exceptions import ConfigError
from inferwatch.alerting.ha import Replica
from inferwatch.config import Config
from inferwatch.model import Clock, StopRequest, SystemClock, stop_signals
from inferwatch.server._components import state_dir
from inferwatch.server._dirlock import DataDirLock
from inferwatch.server._hosts import allowed_hosts, exposure_warning
from inferwatch.server._http_limits import uvicorn_config
from inferwatch.server._malloc import tune_malloc
from inferwatch.server._preflight import config_warnings
from inferwatch.server._shutdown import Shutdown
from inferwatch.server._trace_links import listen_url
from inferwatch.server._wiring import build

__all__ = ["parse_listen", "serve"]

log = logging.getLogger(__name__)



def _jobs(config: Config) -> str:
    """", 2 discovery jobs" when ``scrape.jobs`` has some (their targets come and go)."""
    n = len(config.scrape.jobs)
    return f", {n} discovery job{'s' if n != 1 else ''}" if n else ""

def parse_listen(listen: str) -> tuple[str, int]:
    """``host:port`` -> (host, port); ``ConfigError`` when malformed."""
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"server.listen: expected host:port such as 127.0.0.1:9464, got {listen!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def serve(config: Config, *, listen: str | None = None, clock: Clock | None = None,
          reload: Callable[[], Config] | None = None, stop: StopRequest | None = None) -> None:
    """Run until SIGTERM or SIGINT (one shutdown, see ``_shutdown``): scrape, evaluate, serve the API.

    ``reload`` re-reads the config; with it, ``SIGHUP`` and ``POST /-/reload``
    swap in the new targets, rules, baselines and alerting without a restart. ``stop``: the
    stop signals caught since the process began (the command line's; else taken here): one
    that comes while starting ends the start where that is safe, and the same shutdown runs.
    """
    host, port = parse_listen(listen or config.server.listen)
    clock = clock or SystemClock()
    stop = stop or StopRequest().install()
    shutdown = Shutdown(config.server.shutdown_grace, announce=_stderr)
    stop.on_stop(shutdown.on_signal)  # the grace starts at the signal, whatever start-up is doing
    if stop.requested is not None:
        shutdown.run([])  # stopped before anything opened
        return
    state = state_dir(config)  # one server per data directory, from before anything opens it
    with DataDirLock.acquire(state) if state is not None else nullcontext():
        _run(config, host, port, clock, reload, stop, shutdown)


def _run(config: Config, host: str, port: int, clock: Clock, reload: Callable[[], Config] | None,
         stop: StopRequest, shutdown: Shutdown) -> None:
    tune_malloc()  # before any thread allocates: queries' arrays go back to the system when freed
    parts = build(config, clock=clock, reload=reload)
    if stop.requested is not None:  # stopped while building: nothing started; close what opened
        shutdown.run(parts.stop_steps())
        return
    server = parts.server
    if parts.reloader is not None and threading.current_thread() is threading.main_thread() \
            and hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, parts.reloader.on_signal)
    assert parts.access is not None
    parts.access.relisten(f"{host}:{port}", config)  # reads' default follows the address listened on
    app = parts.app()
    app.state.allowed_hosts = allowed_hosts(host, config.server.external_url)  # DNS-rebinding check
    for warning in [exposure_warning(host, parts.access.settings.anonymous_reads), *config_warnings(config)]:
        if warning:
            print(f"inferwatch serve: warning: {warning}", file=sys.stderr, flush=True)
    parts.start_workers()

    def started(bound_port: int) -> None:
        # Scraping starts once the API listens, so a self-scrape's first try is up, not down.
        server.start()
        if not config.server.external_url:  # trace links in messages must open from anywhere
            parts.sink.base_url = server.base_url = listen_url(host, bound_port)
        if config.ha is not None and not config.ha.address and isinstance(parts.replica, Replica):
            parts.replica.address = f"{host}:{bound_port}"  # what the peers list shows
        print(f"inferwatch serve: listening on {scheme}://{host}:{bound_port} (dashboard at /) "
              f"({len(config.scrape.targets)} targets{_jobs(config)}, {len(server.components.rules)} rules, "
              f"data in {server.components.data_dir}, {reads})", file=sys.stderr, flush=True)

    scheme = "https" if parts.access.tls is not None else "http"
    reads = "reads open" if parts.access.settings.anonymous_reads else "reads need credentials"
    _tune_gc()
    _tune_switching()
    uv = _uvicorn_server()(uvicorn_config(app, host, port, config.server.http, tls=parts.access.tls),
                           on_started=started, port=port, on_stopping=app.state.executor.close,
                           on_signal=shutdown.on_signal, stopped=stop)
    try:
        uv.run()
    finally:
        shutdown.run(parts.stop_steps())


def _stderr(line: str) -> None:
    print(f"inferwatch serve: {line}", file=sys.stderr, flush=True)


def _tune_gc() -> None:
    """Fewer cyclic-GC passes for a long-running server that makes many young objects.

    Everything built so far (modules, config, restored state) is moved out of the
    collector's sight (``gc.freeze``), and a young-generation pass waits for 50,000
    new container objects instead of 700: ingest makes label sets and samples by the
    thousand, nearly all acyclic (reference counting frees them), and the default
    threshold spent a quarter of a remote-write request of new series in the collector.
    """
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)


SWITCH_INTERVAL_S = 0.001
"""How long a thread waiting for the interpreter lets the running one go on (Python's default: 5 ms)."""


def _tune_switching() -> None:
    """Hand the interpreter over every millisecond instead of every five.

    A dashboard panel's answer takes the interpreter a few times (the event loop reads the
    request, a worker evaluates it, the loop sends it); each time, beside heavy queries that
    compute in Python, it waited a switch interval or more. At 1 ms the panel's few
    milliseconds of work are not spread over 15-20 ms of waits, and the rule round's thread
    waits less too; the heavy queries lose a few more switches a second (measured: no fewer
    finished in the same time, beside the short-query tier of :class:`inferwatch.model.Priority`).
    """
    sys.setswitchinterval(SWITCH_INTERVAL_S)


def _uvicorn_server() -> Any:
    import uvicorn

    class Started(uvicorn.Server):
        """uvicorn's server, calling back once its socket listens (with the port it got); SIGTERM and
        SIGINT stop it alike."""

        def __init__(self, config: uvicorn.Config, *, on_started: Callable[[int], None], port: int,
                     on_stopping: Callable[[], None], on_signal: Callable[[int], None],
                     stopped: StopRequest) -> None:
            super().__init__(config)
            self._on_started, self._port, self._on_stopping = on_started, port, on_stopping
            self._on_signal, self._stopped = on_signal, stopped

        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn raises a caught SIGTERM again once HTTP is closed, which ends the process
            # (143) before the server's own shutdown runs: these handlers stop it and raise nothing
            def stop(sig: int, frame: FrameType | None) -> None:
                self._on_signal(sig)
                self.handle_exit(sig, frame)

            with stop_signals(stop):
                if self._stopped.requested is not None:  # came after the last look, before these
                    stop(self._stopped.requested, None)
                yield

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            self._on_stopping()  # running queries are cancelled, so a SIGTERM does not wait for them
            await super().shutdown(sockets=sockets)

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                bound = [s.getsockname()[1] for srv in self.servers for s in (srv.sockets or ())]
                self._on_started(int(bound[0]) if bound else self._port)

    return Started

