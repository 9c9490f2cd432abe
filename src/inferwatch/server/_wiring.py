"""The one wiring place: a ``Config`` in, every part of the server built once.

``build`` makes all of it (store, rules with bands, evaluator, scrape, remote-write
in and out, the alerting pipeline and its Alertmanager push, edge ingest, OTLP
metrics and traces, SLOs, on-call, the reloader, the APIs and the dashboard);
``serve`` runs what it returns, and a reload goes through ``build_components`` and
``Pipeline.reconfigure`` here too (build the new generation first, then swap).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import httpx
from starlette.applications import Starlette
from starlette.routing import BaseRoute

from inferwatch._exceptions import StoreError
from inferwatch.alerting import Pipeline, PipelineHandles, PipelineRunner, pipeline_from_config
from inferwatch.alerting.ha import (
    FailOpenStateDB,
    PgStateDB,
    Replica,
    SoleReplica,
    open_replica,
    shared_key,
    shared_state,
    shared_tables,
)
from inferwatch.baseline import band_provider_factory
from inferwatch.config import Config, IngestLimits, Secret
from inferwatch.model import Clock
from inferwatch.rules import AlertSink, AlertStateStore, BandProviderFactory, Evaluator
from inferwatch.server._api import create_app
from inferwatch.server._components import (
    ALERT_STATE_FILE,
    Embedding,
    LoggingSink,
    ServerComponents,
    data_dir_of,
    state_dir,
)
from inferwatch.server._deadman import DeadMansSwitch, SelfSeries
from inferwatch.server._integrity import IntegrityWatch, check_data_dir
from inferwatch.server._lifecycle import Reloader, reload_route
from inferwatch.server._live_token import LiveToken, token_reload
from inferwatch.server._outcome_store import OUTCOMES_FILE, OutcomeStore
from inferwatch.server._rule_files import baseline_settings
from inferwatch.server._runtime import Server
from inferwatch.server._selfmetrics import DeliveryCounts
from inferwatch.server._shutdown import Step
from inferwatch.server._storage_health import StorageHealth
from inferwatch.server._trace_links import TraceLinks
from inferwatch.server.access import Access
from inferwatch.server.api import (
    GenerationLog,
    OutcomesApi,
    alerting_routes,
    generation_routes,
    ha_routes,
    heartbeat_routes,
    load_ack_key,
    oncall_routes,
    open_trace_store,
    outcome_routes,
    probe_routes,
    resolve_api_token,
    slo_routes,
    trace_routes,
)
from inferwatch.server.ingest import (
    DeltaState,
    DeviceStatus,
    Discovery,
    EdgeIngest,
    GenAiSpans,
    NewSeriesGc,
    OtlpMetricsReceiver,
    Prober,
    RemoteWriteReceiver,
    ScrapeLoop,
    ingest_routes,
    otlp_metrics_routes,
    remote_write_routes,
)
from inferwatch.server.remote import AlertmanagerPush, FanoutSink, RemoteWrite, alert_sink
from inferwatch.server.web import Devices, DriftReports, dashboard_routes, incident_routes
from inferwatch.slo import load_rule_set
from inferwatch.store import DEFAULT_LIMITS, SeriesLimits, SQLiteStore, Store, open_store, set_limits
from inferwatch.tracing import SpanRecord, TraceStore

__all__ = ["ServerParts", "api_routes", "build", "build_components", "build_pipeline",
           "series_limits"]


def _stderr(line: str) -> None:
    print(f"inferwatch serve: {line}", file=sys.stderr, flush=True)


@dataclass
class ServerParts:
    """Everything ``build`` made: the running server's generation, the pipeline, ingest, the routes."""

    config: Config
    server: Server
    pipeline: Pipeline
    sink: TraceLinks
    deliveries: DeliveryCounts
    token: Secret
    edge: EdgeIngest
    traces: TraceStore
    push: AlertmanagerPush | None
    reloader: Reloader | None
    routes: list[BaseRoute] = field(default_factory=list)
    """Every route but the server's own (health, metrics, Prometheus API): ``app()`` mounts them."""
    runner: PipelineRunner | None = None
    outcomes: OutcomeStore | None = None
    """Delayed labels POSTed to ``/api/v1/outcomes`` (``outcomes.sqlite``), for the SDK's pollers."""
    generations: GenerationLog = field(default_factory=lambda: GenerationLog(None))  # generations.sqlite
    replica: Replica | SoleReplica = field(default_factory=SoleReplica)
    """This process in an HA pair: ``replica.is_leader()`` says whether it delivers now."""
    access: Access | None = None
    """Who may do what (``server.auth``, the web config file): the gate in front of every route."""
    deadman: DeadMansSwitch | None = None
    """The Watchdog sent out (``alerting.heartbeat``; an HA pair sets its ``sender.should_send``)
    and the ``heartbeats`` watched in."""

    def app(self) -> Starlette:
        """The server's Starlette app with every route mounted."""
        return create_app(self.server, extra_routes=self.routes, deliveries=self.deliveries,
                          access=self.access)

    def start_workers(self) -> None:
        """Start the background work: edge ingest's upkeep, the pipeline's runner, remote-write out,
        the Alertmanager push (scraping and evaluation start with ``server.start()``)."""
        self.edge.start(self.config.server.evaluation_interval)
        self.runner = PipelineRunner(self.pipeline)
        self.runner.start()
        if isinstance(self.replica, Replica):
            self.replica.start()  # takes the lease or follows; reads what the peer writes
        if self.server.components.remote is not None:
            self.server.components.remote.start()  # what an earlier run left unsent goes first
        if self.push is not None:
            self.push.start()
        if self.deadman is not None:
            self.deadman.start()

    def stop(self) -> None:
        """Stop everything ``build`` made (the pipeline's finished sends recorded first)."""
        for step in self.stop_steps():
            step.run(0.0)

    def stop_steps(self) -> list[Step]:
        """The shutdown in order: scraping and evaluation, sends in flight (until the grace),
        the pushes, then every SQLite file compacted, checkpointed and closed."""
        def deliveries(left: float) -> str | None:
            if self.runner is None:
                return None
            running = self.runner.stop(drain=left)
            return (f"{running} sends or actions still running were handed back to the outbox "
                    "(sent again after the restart)") if running else None

        files = [self.edge.close, self.traces.close, self.generations.close, *(
            [self.outcomes.close] if self.outcomes else [])]
        return [
            Step("stopping scrapes and evaluation", _calls(self.server.halt)),
            Step("finishing deliveries", deliveries),
            Step("giving the sender's lease to the peer", _calls(
                *([self.replica.stop] if isinstance(self.replica, Replica) else []))),
            Step("stopping the Alertmanager push and the heartbeats",
                 _calls(*([self.push.stop] if self.push else []),
                        *([self.deadman.stop] if self.deadman else []))),
            Step("closing edge ingest, traces and outcomes", _calls(*files)),
            Step("closing the store and the alert state", _calls(self.server.components.close)),
            Step("closing the alerting state", _calls(self.pipeline.close)),
        ]


def _calls(*fns: Callable[[], None]) -> Callable[[float], None]:
    """A shutdown step that calls ``fns`` in order (each bounded by its own timeout)."""
    def run(left: float) -> None:
        for fn in fns:
            fn()
    return run


def build(config: Config, *, clock: Clock, reload: Callable[[], Config] | None = None,
          announce: Callable[[str], None] = _stderr, drift: DriftReports | None = None,
          embed: Embedding | None = None) -> ServerParts:
    """Build every part of the server from ``config`` (nothing started: ``serve`` starts them).

    ``reload`` re-reads the config; with it a ``Reloader`` (``POST /-/reload``) applies new
    targets, rules, baselines and the ``alerting`` section without a restart. ``embed``:
    what the demo brings of its own (an alert tap, the receivers' stream, token, traces).
    """
    embed = embed or Embedding()
    data_dir, state = data_dir_of(config), state_dir(config)
    damage = check_data_dir(state, announce) if state is not None else []  # before anything opens a file
    pipeline = build_pipeline(config, clock=clock, stream=embed.stream)
    token = embed.token if embed.token is not None else LiveToken(
        resolve_api_token(config, data_dir, announce))  # a reload may change it
    access = Access.of(config, token, clock,  # before any file opens: a bad web config fails fast
                       open_paths=frozenset() if embed.traces_token else frozenset({"/v1/traces"}))
    inner, push = alert_sink(config, pipeline)  # the pipeline, and existing Alertmanagers if set
    if embed.tap is not None:
        inner = FanoutSink(embed.tap, inner)
    # latency alerts name example slow traces (exemplars); `server` is bound before the first send
    sink = TraceLinks(inner, lambda: server.components, base_url=config.server.external_url or "",
                      words=lambda: (pipeline.config.language, pipeline.config.timezone))
    server = Server(build_components(config, clock=clock, sink=sink), clock=clock)
    if server.components.health is not None and state is not None:
        server.components.health.damage = damage
        server.components.health.watch = IntegrityWatch(state, damage, start=clock.now())
        server.components.health.state = pipeline.db if isinstance(pipeline.db, FailOpenStateDB) else None
    server.components.evaluator.on_pending = pipeline.pending  # pending alerts into the history
    deliveries = DeliveryCounts(queues=lambda: pipeline.queue_stats(clock.now()))
    pipeline.subscribe(deliveries)
    edge = EdgeIngest(config.edge, server.components.appender, clock, state)
    edge.retention = config.storage.retention
    traces = embed.traces if embed.traces is not None else open_trace_store(state, clock)
    reloader = None
    if reload is not None:
        def rebuild(cfg: Config, current: ServerComponents) -> ServerComponents:
            built = build_components(cfg, clock=clock, store=current.store, sink=sink, remote=current.remote)
            if built.health is not None and current.health is not None:
                built.health.damage, built.health.watch = current.health.damage, current.health.watch
                built.health.state = current.health.state
            built.evaluator.on_pending = pipeline.pending
            return built

        reloader = Reloader(server, reload, rebuild, announce=announce, alerting=pipeline.reconfigure,
                            token=token_reload(token, data_dir, announce), auth=access.prepare)
    parts = ServerParts(config, server, pipeline, sink, deliveries, token, edge, traces, push, reloader,
                        access=access)
    parts.replica = open_replica(config, pipeline, clock)
    # a pair's delayed labels and device registry are in its database: posted to either, read on both
    tables = shared_tables(config) if isinstance(pipeline.db, PgStateDB) else None
    parts.outcomes = OutcomeStore(state / OUTCOMES_FILE if state and not tables else None, clock,
                                  config.server.outcomes, shared=tables[0] if tables else None)
    edge.shared = tables[1] if tables else None
    parts.generations = GenerationLog.in_dir(state)  # the scored generations, worst first on request
    server.round_hooks.append(parts.generations.round_hook(lambda: server.components.scrape.exemplars))
    # heartbeats are not reloaded; in a pair the Watchdog names the replica that sent it
    parts.deadman = DeadMansSwitch.build(config, clock, pipeline,
                                         source=config.ha.replica if config.ha is not None else None)
    if parts.deadman.sender is not None:  # in an HA pair only the replica holding the lease sends it
        parts.deadman.sender.should_send = parts.replica.is_leader
    real_time = getattr(clock, "speed", 1.0) <= 1.0  # a compressed --speed skips rounds of real seconds
    self_series = SelfSeries(server, pipeline, parts.deadman, rounds=real_time)
    if isinstance(parts.replica, Replica):
        self_series.extra = parts.replica.series  # PeerReplicaMissing, HADatabaseFailing
    server.round_hooks.append(self_series.record)  # the self-alerts' series
    server.metric_sources.append(parts.deadman.metrics)
    parts.routes = _routes(parts, clock, drift, traces_token=embed.traces_token)
    return parts


def _routes(parts: ServerParts, clock: Clock, drift: DriftReports | None, *,
            traces_token: bool) -> list[BaseRoute]:
    config, server, token, edge = parts.config, parts.server, parts.token, parts.edge
    limits, retention = config.server.limits, config.storage.retention
    appender = server.components.appender

    def devices() -> list[dict[str, Any]]:  # the dashboard's devices: configured ones never heard from too
        seen = dict(edge.devices)
        return [dict(vars(seen.get(name) or DeviceStatus(name))) for name in {*config.edge.devices, *seen}]

    otlp = OtlpMetricsReceiver(appender, clock, DeltaState(), sample_limit=limits.sample_limit,
                               retention=retention)
    remote_in = RemoteWriteReceiver(appender, clock, sample_limit=limits.sample_limit,
                                    label_limit=limits.label_limit, retention=retention,
                                    new_series_gc=NewSeriesGc())
    routes: list[BaseRoute] = [
        *ingest_routes(edge), *otlp_metrics_routes(otlp, token), *remote_write_routes(remote_in, token)]
    if parts.outcomes is not None:  # delayed labels in, for the SDK's pollers
        outcomes = OutcomesApi(parts.outcomes, appender, clock,
                               max_json_depth=config.server.http.max_json_depth)
        routes += outcome_routes(outcomes, token)
    if parts.reloader is not None:
        routes.append(reload_route(parts.reloader, token))
    routes += generation_routes(parts.generations.worst, clock, lambda: server.base_url)
    cluster = parts.replica.cluster_status if isinstance(parts.replica, Replica) else None
    ha = parts.replica.overview if isinstance(parts.replica, Replica) else None
    if parts.deadman is not None:
        routes += heartbeat_routes(parts.deadman.watch, token)
    genai = GenAiSpans(appender, clock, sample_limit=limits.sample_limit, retention=retention)
    return [*routes, *api_routes(server, parts.pipeline, token, parts.traces, limits=series_limits(limits),
                                 drift=drift, devices=devices, traces_token=traces_token, cluster=cluster,
                                 ha=ha, on_spans=genai.observe)]


def api_routes(server: Server, pipeline: Pipeline, token: Secret, traces: TraceStore, *,
               limits: SeriesLimits | None = None, drift: DriftReports | None = None,
               devices: Devices | None = None, traces_token: bool = True,
               cluster: Callable[[], dict[str, Any]] | None = None,
               ha: Callable[[], dict[str, Any]] | None = None,
               on_spans: Callable[[Sequence[SpanRecord]], object] | None = None) -> list[BaseRoute]:
    """The alerting, on-call, trace, SLO and dashboard routes, as ``serve`` and the demo mount them.

    ``traces_token``: ``POST /v1/traces`` needs the write token too (the demo's services send none).
    The routes see the pipeline only through narrow handles (silences, alerts, acknowledgements).
    ``cluster``: an HA pair's status for ``/api/v2/status`` (default: disabled); ``ha``: the pair as
    ``/api/v1/ha`` and the dashboard show it (default: ``{"enabled": false}``); ``on_spans``: what
    each OTLP trace request's spans also feed (serve: the GenAI flag and score series).
    """
    handles = PipelineHandles.of(pipeline, cluster)
    return [
        *alerting_routes(handles, token, limits or DEFAULT_LIMITS),  # silences, webhook; alerts' labels
        *oncall_routes(handles.acks, token),  # acknowledgements, history, who is on call
        *incident_routes(server, handles.acks, handles.silences),  # the page a notification's link opens
        *trace_routes(traces, token if traces_token else None, on_spans),  # OTLP in, traces out
        *slo_routes(server),  # /api/v1/slos
        *probe_routes(server),  # /api/v1/probes
        *ha_routes(ha),  # /api/v1/ha
        *dashboard_routes(server, handles.alerts, drift=drift, devices=devices, token=token),
    ]


def build_components(
    config: Config, *, clock: Clock, store: Store | None = None, sink: AlertSink | None = None,
    band_factory: BandProviderFactory | None = None, transport: httpx.BaseTransport | None = None,
    remote: RemoteWrite | None = None,
) -> ServerComponents:
    """Build one generation of the server from ``config``: store, rules, evaluator, scrape (nothing started).

    A reload passes the current ``store`` and ``remote``: both carry on (the
    remote-write queue is opened with the store, from ``server.remote_write``).
    """
    data_dir, state = data_dir_of(config), state_dir(config)
    if state is not None:
        try:
            state.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the data directory {state}: {exc}") from exc
    rule_set = load_rule_set(config)  # the rules, the default pack and the SLOs' (recordings first)
    rules = rule_set.alerts
    if band_factory is None:  # `threshold: dynamic` rules get their bands (serve and reload)
        band_factory = band_provider_factory(baseline_settings(config.baseline))
    if store is None:
        store = open_store(config.storage, data_dir, clock=clock)
        if config.server.remote_write:
            data_dir.mkdir(parents=True, exist_ok=True)  # the queue lives there with memory storage too
            remote = RemoteWrite(config.server.remote_write, store, data_dir, clock=clock,
                                 transport=transport)
    set_limits(store, series_limits(config.server.limits))  # a reload applies changed limits too
    alert_state = AlertStateStore(state / ALERT_STATE_FILE) if state is not None else None
    evaluator = Evaluator(
        rules, store, clock=clock, sink=sink or LoggingSink(), state=alert_state, band_factory=band_factory,
        recordings=rule_set.recordings, record_to=remote.tee if remote is not None else None,
    )
    appender = remote.tee if remote is not None else store  # scraped samples reach the remotes too
    jobs = config.scrape.jobs  # their targets come and go: discovery runs beside the scrape threads
    discovery = Discovery(jobs, clock=clock, transport=transport) if jobs else None
    scrape = ScrapeLoop(config.scrape.targets, appender, clock=clock, transport=transport,
                        sample_limit=config.server.limits.sample_limit, jobs=jobs, discovery=discovery,
                        new_series_gc=NewSeriesGc())  # a first scrape's objects frozen unwalked
    # the storage series go where scraped samples go: the store, and the remotes through the tee
    health = StorageHealth(appender, data_dir) if isinstance(store, SQLiteStore) else None
    probes = Prober(config.probes, appender, clock=clock) if config.probes else None  # golden files read here
    return ServerComponents(config, data_dir, store, scrape, rules, evaluator, alert_state, remote,
                            rule_set.slos, probes, health)


BYTES_PER_SERIES = 2700  # measured: benchmarks/bench_series_memory.py (10 labels a series, SQLite store)


def series_limits(limits: IngestLimits) -> SeriesLimits:
    """The store's new-series limits from ``server.limits`` (``max_series`` unset: sized to the machine)."""
    max_series = limits.max_series
    if max_series is None:
        import psutil

        max_series = min(1_000_000, psutil.virtual_memory().total // 4 // BYTES_PER_SERIES)
    return SeriesLimits(limits.label_limit, limits.label_name_length_limit, limits.label_value_length_limit,
                        max_series, limits.max_series_per_metric)


def build_pipeline(config: Config, *, clock: Clock, stream: TextIO | None = None) -> Pipeline:
    """The alerting pipeline of ``serve`` (built by ``PipelineBuilder``): sends run on threads of
    their own; state in ``data_dir/alerting.sqlite`` (in memory with memory storage), or in
    PostgreSQL with an ``ha`` section."""
    state = state_dir(config)
    db, key = shared_state(config, state), load_ack_key(state)
    if isinstance(db, PgStateDB):  # a pair signs with one key: a link made by either replica works on both
        key = shared_key(db, "ack", key)
    return pipeline_from_config(config, state, clock, ack_key=key, stream=stream, db=db)
