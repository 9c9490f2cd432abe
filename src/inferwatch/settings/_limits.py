"""``server.query`` and ``server.http``: the bounds that keep one client from freezing the server."""

from __future__ import annotations

import os
import sys
from typing import Literal

from pydantic import Field

from inferwatch.settings._types import Duration, FrozenModel

__all__ = ["HttpLimits", "IngestLimits", "QueryLimits"]


class QueryLimits(FrozenModel):
    """Bounds on API queries, as Prometheus's ``--query.*`` flags (same defaults)."""

    timeout: Duration = Field(120.0, gt=0, description="a query running longer is cancelled (503 timeout)")
    max_samples: int = Field(
        50_000_000, gt=0,
        description="most samples one query may hold in memory at once (422 execution error beyond)")
    max_concurrency: int | None = Field(
        None, gt=0, le=256, description="queries run at once; more wait their turn (their wait counts "
        "against their timeout). Unset: 4 a core, at most 16 (Prometheus: 20). Threads share the "
        "interpreter, so more workers add no CPU, but a small query runs beside heavy ones instead of "
        "queueing behind them; rule rounds go first whatever the number")

    nice: int = Field(
        0, ge=0, le=19, description="how much lower the operating system's scheduling priority of the "
        "query threads is than the rest of the server's (Linux: a thread's own nice value, raised by "
        "this at its start; elsewhere ignored), so on a busy machine a rule round or a scrape gets a "
        "core before a heavy query does. 0: the same priority")

    isolation: Literal["fork", "thread"] | None = Field(
        None, description="where a heavy query is evaluated: 'fork' in a child process forked from the "
        "server (it reads the head as it stood at the fork, on the other core, while rule rounds, scrapes "
        "and light queries keep the server's interpreter), 'thread' on a query thread of the server's. "
        "Unset: fork on Linux, thread elsewhere (macOS forbids much in a forked child of a process with "
        "threads). Queries that reach before the "
        "in-memory head, and light ones, always run on a thread")
    fork_min_points: int = Field(
        100_000, gt=0, description="a query forks when the series its selectors match times its steps "
        "reaches this (a fork costs a few ms; smaller queries cost less on a thread)")
    fork_nice: int = Field(
        19, ge=0, le=19, description="how much lower the scheduling priority of a query's child process is "
        "than the server's (with fork_scheduler 'batch' or 'normal'), so rule rounds, scrapes and light "
        "queries get a core first. 0: the same")
    fork_scheduler: Literal["idle", "batch", "normal"] = Field(
        "idle", description="the operating system's scheduling policy of a query's child process (Linux): "
        "'idle' (SCHED_IDLE: it runs on a core nothing else wants, and any thread of the server's that "
        "wakes takes the core at once), 'batch' (SCHED_BATCH plus fork_nice), 'normal' (fork_nice alone)")
    fork_max_children: int | None = Field(
        None, gt=0, le=256, description="query children alive at once; a heavy query beyond waits for one "
        "to end (its wait counts against its timeout; Prometheus's 'query timed out in query queue' when "
        "it runs out). More children than cores add memory and take CPU from the server, not answers. "
        "Unset: the number of cores")

    def forks(self) -> bool:
        """Whether heavy queries run in forked children (``isolation``; unset: on Linux)."""
        return self.isolation == "fork" or (self.isolation is None and sys.platform.startswith("linux"))

    def workers(self) -> int:
        """Queries run at once: ``max_concurrency``, else 4 a core (at most 16)."""
        return self.max_concurrency or max(4, min(16, 4 * (os.cpu_count() or 1)))


class HttpLimits(FrozenModel):
    """Bounds on HTTP clients: connections, idle and header time, request bodies and nesting."""

    max_connections: int = Field(
        512, gt=0, description="open connections at once; beyond it new ones are answered 503 and closed")
    keep_alive_timeout: Duration = Field(
        5.0, gt=0, description="an idle keep-alive connection is closed after")
    header_timeout: Duration = Field(
        10.0, gt=0, description="a connection that has not sent a whole request within this is closed")
    max_body_bytes: int = Field(
        1 << 20, gt=0, description="largest request body (413 beyond); /api/v1/alertmanager and ingest too")
    max_json_depth: int = Field(32, gt=0, le=512, description="deepest JSON nesting in a request body (400)")


class IngestLimits(FrozenModel):
    """Bounds on what comes in (scrape, remote write, OTLP, edge, alerts), in Prometheus's and Mimir's names.

    A request over a limit is refused whole (400 naming the limit; nothing stored);
    a scrape over one fails (``up`` 0, the reason in ``/api/v1/targets``). 0 turns a limit off.
    """

    label_limit: int = Field(30, ge=0, description="most labels a series (or an alert) may have")
    label_name_length_limit: int = Field(1024, ge=0, description="longest label name, in characters")
    label_value_length_limit: int = Field(2048, ge=0, description="longest label value, in characters")
    sample_limit: int = Field(
        1_000_000, ge=0, description="most samples one request (or one scrape, when its target sets none) "
        "may carry")
    max_series: int | None = Field(
        None, ge=0, description="most series the store holds; new series beyond it are refused. Unset: "
        "sized to the machine, a quarter of its memory at about 2.7 kB a series, at most 1,000,000")
    max_series_per_metric: int = Field(
        200_000, ge=0, description="most series one metric name may have")
