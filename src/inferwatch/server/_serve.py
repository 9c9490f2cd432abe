"""Running the whole server in this process: components, threads, uvicorn."""

from __future__ import annotations

import gc
import logging
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any

from inferwatch._exceptions import ConfigError
from inferwatch.config import Config
from inferwatch.model import Clock, SystemClock
from inferwatch.server._api import create_app
from inferwatch.server._hosts import allowed_hosts, exposure_warning
from inferwatch.server._http_limits import uvicorn_config
from inferwatch.server._lifecycle import Reloader, reload_route
from inferwatch.server._preflight import config_warnings
from inferwatch.server._runtime import Server
from inferwatch.server._selfmetrics import DeliveryCounts
from inferwatch.server._wiring import (
    ServerComponents,
    build_components,
    build_pipeline,
    data_dir_of,
    series_limits,
)
from inferwatch.server.api._otlp_traces import open_trace_store, trace_routes
from inferwatch.server.ingest._otlp_delta import DeltaState
from inferwatch.server.ingest._otlp_metrics import OtlpMetricsReceiver, otlp_metrics_routes
from inferwatch.server.ingest._remote_write_in import RemoteWriteReceiver, remote_write_routes
from inferwatch.server.remote._alertmanager_push import alert_sink

__all__ = ["parse_listen", "serve"]

log = logging.getLogger(__name__)


def parse_listen(listen: str) -> tuple[str, int]:
    """``host:port`` -> (host, port); ``ConfigError`` when malformed."""
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"server.listen: expected host:port such as 127.0.0.1:9464, got {listen!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def serve(config: Config, *, listen: str | None = None, clock: Clock | None = None,
          reload: Callable[[], Config] | None = None) -> None:
    """Run until interrupted: scrape, evaluate, serve the API (blocks).

    ``reload`` re-reads the config; with it, ``SIGHUP`` and ``POST /-/reload``
    swap in the new targets, rules and baselines without a restart.
    """
    import signal


    host, port = parse_listen(listen or config.server.listen)
    clock = clock or SystemClock()
    from inferwatch.alerting import PipelineRunner
    from inferwatch.server.api._alerting_api import alerting_routes, resolve_api_token

    data_dir = data_dir_of(config)
    pipeline = build_pipeline(config, clock=clock)
    token = resolve_api_token(config, data_dir, lambda m: print(f"inferwatch serve: {m}", file=sys.stderr))
    sink, push = alert_sink(config, pipeline)  # the pipeline, and existing Alertmanagers if set
    from inferwatch.server._trace_links import TraceLinks, listen_url

    # latency alerts name example slow traces (exemplars); `server` is bound before the first send
    sink = TraceLinks(sink, lambda: server.components, base_url=config.server.external_url or "")
    server = Server(build_components(config, clock=clock, sink=sink), clock=clock)
    server.components.evaluator.on_pending = pipeline.pending  # pending alerts into the history
    deliveries = DeliveryCounts(queues=lambda: pipeline.queue_stats(clock.now()))
    pipeline.subscribe(deliveries)
    routes = alerting_routes(pipeline, token, series_limits(config.server.limits))  # alerts' labels too
    from inferwatch.server.api._oncall_api import oncall_routes

    routes += oncall_routes(pipeline, token)  # acknowledgements, history, who is on call
    from inferwatch.server.ingest._edge_ingest import DeviceStatus, EdgeIngest, ingest_routes

    edge = EdgeIngest(config.edge, server.components.appender, clock,
                      data_dir if config.storage.type == "sqlite" else None)
    edge.retention = config.storage.retention
    routes += ingest_routes(edge)
    edge.start(config.server.evaluation_interval)
    routes.extend(trace_routes(open_trace_store(config, data_dir, clock), token))  # OTLP in, traces out
    otlp_metrics = OtlpMetricsReceiver(server.components.appender, clock, DeltaState(),  # OTLP metrics in
                                       sample_limit=config.server.limits.sample_limit,
                                       retention=config.storage.retention)
    routes.extend(otlp_metrics_routes(otlp_metrics, token))
    routes.extend(remote_write_routes(RemoteWriteReceiver(
        server.components.appender, clock, sample_limit=config.server.limits.sample_limit,
        label_limit=config.server.limits.label_limit, retention=config.storage.retention), token))
    from inferwatch.server.api._slo_api import slo_routes

    routes.extend(slo_routes(server))  # /api/v1/slos
    if reload is not None:
        def build(cfg: Config, current: ServerComponents) -> ServerComponents:
            built = build_components(cfg, clock=clock, store=current.store, sink=sink, remote=current.remote)
            built.evaluator.on_pending = pipeline.pending
            return built

        reloader = Reloader(server, reload, build, announce=lambda line: print(
            f"inferwatch serve: {line}", file=sys.stderr, flush=True))
        routes.append(reload_route(reloader, token))
        if threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGHUP"):
            signal.signal(signal.SIGHUP, reloader.on_signal)
    from inferwatch.server.web._dashboard import dashboard_routes

    def devices() -> list[dict[str, Any]]:  # the dashboard's devices: configured ones never heard from too
        seen = dict(edge.devices)
        return [dict(vars(seen.get(name) or DeviceStatus(name))) for name in {*config.edge.devices, *seen}]

    app = create_app(server, extra_routes=[*routes, *dashboard_routes(server, pipeline, devices=devices)],
                     deliveries=deliveries)
    app.state.allowed_hosts = allowed_hosts(host, config.server.external_url)  # DNS-rebinding check
    for warning in [exposure_warning(host), *config_warnings(config)]:
        if warning:
            print(f"inferwatch serve: warning: {warning}", file=sys.stderr, flush=True)
    notify = PipelineRunner(pipeline)
    notify.start()
    if server.components.remote is not None:
        server.components.remote.start()  # remote-write out: what an earlier run left unsent goes first
    if push is not None:
        push.start()
    def started(bound_port: int) -> None:
        # Scraping starts once the API listens, so a self-scrape's first try is up, not down.
        server.start()
        if not config.server.external_url:  # trace links in messages must open from anywhere
            sink.base_url = server.base_url = listen_url(host, bound_port)
        print(f"inferwatch serve: listening on http://{host}:{bound_port} (dashboard at /) "
              f"({len(config.scrape.targets)} targets, {len(server.components.rules)} rules, "
              f"data in {server.components.data_dir})", file=sys.stderr, flush=True)

    _tune_gc()
    uv = _uvicorn_server()(uvicorn_config(app, host, port, config.server.http),
                           on_started=started, port=port, on_stopping=app.state.executor.close)
    try:
        uv.run()
    finally:
        notify.stop()
        server.stop()
        edge.close()
        if push is not None:
            push.stop()


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


def _uvicorn_server() -> Any:
    import uvicorn

    class Started(uvicorn.Server):
        """uvicorn's server, calling back once its socket listens (with the port it got)."""

        def __init__(self, config: uvicorn.Config, *, on_started: Callable[[int], None], port: int,
                     on_stopping: Callable[[], None]) -> None:
            super().__init__(config)
            self._on_started, self._port, self._on_stopping = on_started, port, on_stopping

        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            self._on_stopping()  # running queries are cancelled, so a SIGTERM does not wait for them
            await super().shutdown(sockets=sockets)

        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                bound = [s.getsockname()[1] for srv in self.servers for s in (srv.sockets or ())]
                self._on_started(int(bound[0]) if bound else self._port)

    return Started

