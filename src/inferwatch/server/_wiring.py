"""All the server's wiring in one place: a ``Config`` in, ready components out.

The lead, the alerting pipeline and the dynamic baselines plug in here (the
``sink`` and ``band_factory`` arguments). A reload builds a complete new
``ServerComponents`` first and only then swaps it in (STYLE.md #8).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from inferwatch._exceptions import StoreError
from inferwatch.baseline import band_provider_factory
from inferwatch.config import Config, IngestLimits
from inferwatch.config import env as config_env
from inferwatch.model import Clock
from inferwatch.rules import (
    Alert,
    AlertSink,
    AlertStateStore,
    BandProviderFactory,
    Evaluator,
    Rule,
)
from inferwatch.server.ingest._scrape import ScrapeLoop
from inferwatch.server.remote._remote_write_out import RemoteWrite
from inferwatch.slo import Slo, load_rule_set
from inferwatch.store import SeriesLimits, Store, open_store, set_limits

if TYPE_CHECKING:
    from inferwatch.alerting import Pipeline

__all__ = ["ALERT_STATE_FILE", "LoggingSink", "ServerComponents", "build_components", "data_dir_of"]
__all__ += ["build_pipeline", "series_limits"]  # the alerting pipeline of serve (issue 20); limits

log = logging.getLogger(__name__)
ALERT_STATE_FILE = "alerts.sqlite"


class LoggingSink:
    """The default alert sink: one log line per alert (until a pipeline is plugged in)."""

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        """Log each alert with its state."""
        for a in alerts:
            state = "resolved" if a.resolved(now) else "firing"
            log.warning("alert %s %s %s value=%s", a.name, state, a.labels, a.value)


@dataclass
class ServerComponents:
    """One generation of the server: store, scrape loop, rules, evaluator."""

    config: Config
    data_dir: Path
    store: Store
    scrape: ScrapeLoop
    rules: list[Rule]
    evaluator: Evaluator
    state: AlertStateStore | None
    remote: RemoteWrite | None = None  # server.remote_write: shared by every generation, like the store
    slos: tuple[Slo, ...] = ()  # the SLOs whose rules the evaluator runs (/api/v1/slos)

    @property
    def appender(self) -> Store:
        """Where ingest paths append: the store, through the remote-write queue when remotes are set."""
        return self.remote.tee if self.remote is not None else self.store

    def close(self) -> None:
        """Save the state, stop the scrape threads and close the files (shutdown)."""
        self.scrape.stop()
        if self.state is not None:
            try:
                self.evaluator.save_state()  # baselines are saved every few minutes: save the rest
            except Exception:
                log.exception("saving the alert state at shutdown failed")
        self.retire(keep_store=False)

    def retire(self, *, keep_store: bool) -> None:
        """Stop and close what this generation owns (the store too unless the next one shares it)."""
        self.scrape.stop()
        if self.state is not None:
            self.state.close()
        if not keep_store:
            if self.remote is not None:
                self.remote.close()  # senders first: what is unsent stays queued for the next start
            self.store.close()


def data_dir_of(config: Config) -> Path:
    """``$INFERWATCH_DATA_DIR``, else ``server.data_dir``."""
    return Path(os.environ.get(config_env.ENV_DATA_DIR) or config.server.data_dir)


def build_components(
    config: Config, *, clock: Clock, store: Store | None = None, sink: AlertSink | None = None,
    band_factory: BandProviderFactory | None = None, transport: httpx.BaseTransport | None = None,
    remote: RemoteWrite | None = None,
) -> ServerComponents:
    """Build every component of the server from ``config`` (nothing started yet).

    A reload passes the current ``store`` and ``remote``: both carry on (the
    remote-write queue is opened with the store, from ``server.remote_write``).
    """
    data_dir = data_dir_of(config)
    if config.storage.type == "sqlite":
        try:
            data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the data directory {data_dir}: {exc}") from exc
    rule_set = load_rule_set(config)  # the rules, the default pack and the SLOs' (recordings first)
    rules = rule_set.alerts
    if band_factory is None:  # `threshold: dynamic` rules get their bands (serve and reload)
        band_factory = band_provider_factory(config.baseline)
    if store is None:
        store = open_store(config.storage, data_dir, clock=clock)
        if config.server.remote_write:
            data_dir.mkdir(parents=True, exist_ok=True)  # the queue lives there with memory storage too
            remote = RemoteWrite(config.server.remote_write, store, data_dir, clock=clock,
                                 transport=transport)
    set_limits(store, series_limits(config.server.limits))  # a reload applies changed limits too
    state = AlertStateStore(data_dir / ALERT_STATE_FILE) if config.storage.type == "sqlite" else None
    evaluator = Evaluator(
        rules, store, clock=clock, sink=sink or LoggingSink(), state=state, band_factory=band_factory,
        recordings=rule_set.recordings, record_to=remote.tee if remote is not None else None,
    )
    appender = remote.tee if remote is not None else store  # scraped samples reach the remotes too
    scrape = ScrapeLoop(config.scrape.targets, appender, clock=clock, transport=transport,
                        sample_limit=config.server.limits.sample_limit)
    return ServerComponents(config, data_dir, store, scrape, rules, evaluator, state, remote, rule_set.slos)


BYTES_PER_SERIES = 2700  # measured: benchmarks/bench_series_memory.py (10 labels a series, SQLite store)


def series_limits(limits: IngestLimits) -> SeriesLimits:
    """The store's new-series limits from ``server.limits`` (``max_series`` unset: sized to the machine)."""
    max_series = limits.max_series
    if max_series is None:
        import psutil

        max_series = min(1_000_000, psutil.virtual_memory().total // 4 // BYTES_PER_SERIES)
    return SeriesLimits(limits.label_limit, limits.label_name_length_limit, limits.label_value_length_limit,
                        max_series, limits.max_series_per_metric)


def build_pipeline(config: Config, *, clock: Clock) -> Pipeline:
    """The alerting pipeline of ``serve`` (built by ``PipelineBuilder``): sends run on threads of
    their own; state in ``data_dir/alerting.sqlite`` (in memory with memory storage)."""
    from inferwatch.alerting import pipeline_from_config
    from inferwatch.server.api._oncall_api import load_ack_key

    data_dir = data_dir_of(config) if config.storage.type == "sqlite" else None
    return pipeline_from_config(config, data_dir, clock, ack_key=load_ack_key(data_dir))
