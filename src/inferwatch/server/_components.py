"""One generation of the server (``ServerComponents``), where its files live, and what a host that
embeds the server brings (``Embedding``).

``_wiring`` builds them; a reload builds a complete new generation first and only
then swaps it in (STYLE.md #8).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from inferwatch.config import Config, Secret
from inferwatch.config import env as config_env
from inferwatch.rules import (
    Alert,
    AlertSink,
    AlertStateStore,
    Evaluator,
    Rule,
)
from inferwatch.server._storage_health import StorageHealth
from inferwatch.server.ingest import Prober, ScrapeLoop
from inferwatch.server.remote import RemoteWrite
from inferwatch.slo import Slo
from inferwatch.store import Store
from inferwatch.tracing import TraceStore

if TYPE_CHECKING:
    pass

__all__ = ["ALERT_STATE_FILE", "Embedding", "LoggingSink", "ServerComponents", "data_dir_of", "state_dir"]

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
    probes: Prober | None = None  # the config's probes (started and stopped with the scrape loop)
    health: StorageHealth | None = None  # the storage series, recorded before each round (SQLite storage)

    @property
    def appender(self) -> Store:
        """Where ingest paths append: the store, through the remote-write queue when remotes are set."""
        return self.remote.tee if self.remote is not None else self.store

    def close(self) -> None:
        """Save the state, stop the scrape and probe threads and close the files (shutdown)."""
        self.scrape.stop()
        if self.probes is not None:
            self.probes.stop()
        if self.state is not None:
            try:
                self.evaluator.save_state()  # baselines are saved every few minutes: save the rest
            except Exception:
                log.exception("saving the alert state at shutdown failed")
        self.retire(keep_store=False)

    def retire(self, *, keep_store: bool) -> None:
        """Stop and close what this generation owns (the store too unless the next one shares it)."""
        self.scrape.stop()
        if self.probes is not None:
            self.probes.stop()
        if self.state is not None:
            self.state.close()
        if not keep_store:
            if self.remote is not None:
                self.remote.close()  # senders first: what is unsent stays queued for the next start
            self.store.close()


def data_dir_of(config: Config) -> Path:
    """``$INFERWATCH_DATA_DIR``, else ``server.data_dir``."""
    return Path(os.environ.get(config_env.ENV_DATA_DIR) or config.server.data_dir)


def state_dir(config: Config) -> Path | None:
    """Where the state files go: the data directory with SQLite storage, ``None`` (in memory) otherwise.

    The one place that decides whether the server keeps its state on disk.
    """
    return data_dir_of(config) if config.storage.type == "sqlite" else None


@dataclass(frozen=True)
class Embedding:
    """What a host that embeds the server (the demo) brings instead of ``serve``'s defaults."""

    tap: AlertSink | None = None
    """Sees every round of alerts (with their trace links) before the pipeline does."""
    stream: TextIO | None = None
    """Where terminal receivers write (default: stdout)."""
    traces: TraceStore | None = None
    """The trace store to serve (default: in the state directory, or in memory)."""
    token: Secret | None = None
    """The write token (default: ``$INFERWATCH_API_TOKEN``, the config's, or one generated)."""
    traces_token: bool = True
    """Whether ``POST /v1/traces`` needs the token (the demo's services send none)."""
